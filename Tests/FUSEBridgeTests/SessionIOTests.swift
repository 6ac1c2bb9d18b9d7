import XCTest
@testable import FUSEBridge

/// The session's own /dev/fuse I/O adds `FUSE_HANDLE_KILLPRIV_V2` to the INIT reply when the
/// kernel offered it, and passes every other message through byte for byte. Driven over a pipe:
/// what `writeReply` writes is read back as the kernel would read it.
final class SessionIOTests: XCTestCase {
    private var pipeEnds: [Int32] = [-1, -1]

    override func setUpWithError() throws {
        XCTAssertEqual(pipe(&pipeEnds), 0)
    }

    override func tearDown() {
        pipeEnds.forEach { if $0 >= 0 { close($0) } }
        super.tearDown()
    }

    /// A kernel request: a 40-byte `fuse_in_header`, then for INIT a `fuse_init_in` with `flags`.
    private func request(opcode: UInt32, unique: UInt64, flags: UInt32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 40 + 64)
        bytes.withUnsafeMutableBytes { b in
            b.storeBytes(of: UInt32(b.count), toByteOffset: 0, as: UInt32.self)
            b.storeBytes(of: opcode, toByteOffset: 4, as: UInt32.self)
            b.storeBytes(of: unique, toByteOffset: 8, as: UInt64.self)
            b.storeBytes(of: UInt32(7), toByteOffset: 40, as: UInt32.self)   // major
            b.storeBytes(of: UInt32(38), toByteOffset: 44, as: UInt32.self)  // minor
            b.storeBytes(of: flags, toByteOffset: 52, as: UInt32.self)
        }
        return bytes
    }

    /// Writes a reply (a 16-byte `fuse_out_header` and an argument with `flags` at 12) through
    /// `SessionIO.writeReply` and returns the bytes that came out of the pipe.
    private func reply(unique: UInt64, error: Int32 = 0, flags: UInt32) throws -> [UInt8] {
        var header = [UInt8](repeating: 0, count: 16)
        var argument = [UInt8](repeating: 0xA5, count: 64)
        header.withUnsafeMutableBytes { b in
            b.storeBytes(of: UInt32(80), toByteOffset: 0, as: UInt32.self)
            b.storeBytes(of: error, toByteOffset: 4, as: Int32.self)
            b.storeBytes(of: unique, toByteOffset: 8, as: UInt64.self)
        }
        argument.withUnsafeMutableBytes { $0.storeBytes(of: flags, toByteOffset: 12, as: UInt32.self) }
        XCTAssertEqual(send(&header, &argument), 80)
        var out = [UInt8](repeating: 0, count: 80)
        XCTAssertEqual(out.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, 80) }, 80)
        return out
    }

    /// `SessionIO.writeReply` of a header and an argument, as libfuse hands them over.
    private func send(_ header: inout [UInt8], _ argument: inout [UInt8]) -> Int {
        header.withUnsafeMutableBytes { h in
            argument.withUnsafeMutableBytes { a in
                var iov = [iovec(iov_base: h.baseAddress, iov_len: h.count), iovec(iov_base: a.baseAddress, iov_len: a.count)]
                return iov.withUnsafeMutableBufferPointer { SessionIO.writeReply(pipeEnds[1], $0.baseAddress, 2) }
            }
        }
    }

    private func flags(ofReply bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16 + 12, as: UInt32.self) }
    }

    private func note(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { SessionIO.noteRequest(pipeEnds[1], $0.baseAddress!) }
    }

    func testTheInitReplyAsksForKillprivV2WhenTheKernelOffersIt() throws {
        note(request(opcode: 26, unique: 2, flags: 0x73ff_fffb))
        let out = try reply(unique: 2, flags: 0x40c0_e029)
        XCTAssertEqual(flags(ofReply: out), 0x40c0_e029 | SessionIO.handleKillprivV2)
        // Nothing else changed: the header, and the argument around the flags.
        XCTAssertEqual(Array(out[0..<16]), [80, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(Array(out[16..<28]) + Array(out[32...]), [UInt8](repeating: 0xA5, count: 60))
        // Once: a later reply that happens to carry the same id is left alone.
        XCTAssertEqual(flags(ofReply: try reply(unique: 2, flags: 0x1)), 0x1)
    }

    func testNothingIsAddedWhenTheKernelDoesNotOfferIt() throws {
        note(request(opcode: 26, unique: 3, flags: 0x73ff_fffb & ~SessionIO.handleKillprivV2))
        XCTAssertEqual(flags(ofReply: try reply(unique: 3, flags: 0x40c0_e029)), 0x40c0_e029)
    }

    func testAnINITRefusedWithAnErrorIsLeftAlone() throws {
        note(request(opcode: 26, unique: 4, flags: 0x73ff_fffb))
        XCTAssertEqual(flags(ofReply: try reply(unique: 4, error: -EPROTO, flags: 0)), 0)
    }

    func testOtherRequestsAndRepliesPassThrough() throws {
        // A GETATTR (3) with bit 28 set where INIT's flags would be is not an INIT.
        note(request(opcode: 3, unique: 5, flags: SessionIO.handleKillprivV2))
        XCTAssertEqual(flags(ofReply: try reply(unique: 5, flags: 0x10)), 0x10)
        // A reply to another request while an INIT is pending is not the INIT's.
        note(request(opcode: 26, unique: 6, flags: 0x73ff_fffb))
        XCTAssertEqual(flags(ofReply: try reply(unique: 9, flags: 0x20)), 0x20)
        XCTAssertEqual(flags(ofReply: try reply(unique: 6, flags: 0x20)), 0x20 | SessionIO.handleKillprivV2)
    }

    func testAFailedWriteLeavesItsErrnoForLibfuse() throws {
        note(request(opcode: 26, unique: 7, flags: 0x73ff_fffb))
        close(pipeEnds[0])
        pipeEnds[0] = -1
        signal(SIGPIPE, SIG_IGN)
        var header = [UInt8](repeating: 0, count: 16), argument = [UInt8](repeating: 0, count: 64)
        header.withUnsafeMutableBytes { $0.storeBytes(of: UInt64(7), toByteOffset: 8, as: UInt64.self) }
        XCTAssertEqual(send(&header, &argument), -1)
        XCTAssertEqual(errno, EPIPE)
    }
}
