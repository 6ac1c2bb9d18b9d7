import Foundation
import TestSupport
import XCTest

/// What the kernel asks the daemon for while a program writes, counted from libfuse's own
/// trace of the requests (`--debug-fuse`) of the binary under test.
final class KernelRequestsEndToEndTests: XCTestCase {
    var mounts: [MountedFavFS] = []
    var served: URL!

    override func setUpWithError() throws {
        try E2EGate.require(apache: false)
        served = URL(fileURLWithPath: "/tmp/favfs-requests-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        if let served { try? FileManager.default.removeItem(at: served) }
        super.tearDown()
    }

    /// Without `FUSE_HANDLE_KILLPRIV_V2` the kernel asks for `security.capability` before every
    /// `write(2)` (a GETXATTR round trip each); with it, once per inode until its attributes are
    /// refreshed. 200 writes of 4 KiB through one descriptor: a handful of GETXATTRs, not 200.
    func testWritesDoNotEachAskForSecurityCapability() throws {
        let m = try MountedFavFS(remote: "file://" + served.path)
        mounts.append(m)
        let trace = m.base.appendingPathComponent("fuse-trace.log")
        XCTAssertTrue(FileManager.default.createFile(atPath: trace.path, contents: nil))
        let traceHandle = try FileHandle(forWritingTo: trace)
        defer { try? traceHandle.close() }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: FavFSBinary.path)
        p.arguments = ["mount", m.path, "--remote", "file://" + served.path, "--cache-dir", m.cacheDir.path,
                       "--foreground", "--debug-fuse"]
        p.standardError = traceHandle
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        let deadline = Date().addingTimeInterval(60)
        while !m.isMounted, p.isRunning, Date() < deadline { usleep(50_000) }
        XCTAssertTrue(m.isMounted, "not mounted within 60 s")

        let path = m.path + "/written.bin"
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0, "create: \(String(cString: strerror(errno)))")
        let block = [UInt8](repeating: 0x5A, count: 4096)
        for i in 0..<200 {
            let n = block.withUnsafeBytes { write(fd, $0.baseAddress, 4096) }
            XCTAssertEqual(n, 4096, "write \(i): \(String(cString: strerror(errno)))")
        }
        XCTAssertEqual(close(fd), 0)
        XCTAssertTrue(try m.unmount().succeeded)
        p.waitUntilExit()

        let log = try String(contentsOf: trace, encoding: .utf8)
        // The kernel's INIT offers its flags first; an older kernel has no such flag to ask for.
        let offered = log.components(separatedBy: "\n").first { $0.contains("flags=0x") }
            .flatMap { $0.components(separatedBy: "flags=0x").last }
            .flatMap { UInt32($0.prefix { $0.isHexDigit }, radix: 16) }
        let offeredFlags = try XCTUnwrap(offered, "no INIT in libfuse's trace")
        try XCTSkipIf(offeredFlags & (1 << 28) == 0, "this kernel does not offer FUSE_HANDLE_KILLPRIV_V2")
        let writes = log.components(separatedBy: "opcode: WRITE").count - 1
        let getxattrs = log.components(separatedBy: "opcode: GETXATTR").count - 1
        XCTAssertGreaterThanOrEqual(writes, 200, "the trace does not show the writes")
        XCTAssertLessThan(getxattrs, 20, "\(getxattrs) GETXATTR requests for \(writes) writes")
        XCTAssertEqual(try Data(contentsOf: served.appendingPathComponent("written.bin")), Data(repeating: 0x5A, count: 200 * 4096))
    }
}
