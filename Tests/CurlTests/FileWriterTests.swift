import XCTest
@testable import Curl

/// A download's body gathered into larger writes: every byte lands at its offset, the first
/// bytes at once, and a failed write is reported.
final class FileWriterTests: XCTestCase {
    private func tempFile() throws -> (path: String, fd: Int32) {
        let path = NSTemporaryDirectory() + "filewriter-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        return (path, fd)
    }

    func testEveryByteLandsAtItsOffsetWhateverThePieces() throws {
        let (path, fd) = try tempFile()
        defer { close(fd); unlink(path) }
        var rng = SystemRandomNumberGenerator()
        let body = (0..<(3 << 20) + 12_345).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let w = FileWriter(fd: fd, start: 1000)
        var offset = 0
        var sizes = [1, 16 << 10, 7, 300 << 10, 16 << 10, 5000]
        while offset < body.count {
            let n = min(sizes.first ?? 16 << 10, body.count - offset)
            if !sizes.isEmpty { sizes.removeFirst() }
            body[offset..<offset + n].withUnsafeBytes { XCTAssertNil(w.write($0)) }
            offset += n
            XCTAssertLessThanOrEqual(Int64(offset) - w.flushed, Int64(FileWriter.capacity))
        }
        XCTAssertNil(w.flush())
        XCTAssertEqual(w.flushed, Int64(body.count))
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(data.count, 1000 + body.count)
        XCTAssertEqual([UInt8](data.dropFirst(1000)), body)
    }

    func testTheFirstBytesAreWrittenAtOnce() throws {
        let (path, fd) = try tempFile()
        defer { close(fd); unlink(path) }
        let w = FileWriter(fd: fd, start: 0)
        let piece = [UInt8](repeating: 7, count: FileWriter.first)
        piece.withUnsafeBytes { XCTAssertNil(w.write($0)) }
        XCTAssertEqual(w.flushed, Int64(FileWriter.first), "a reader waits for these")
        // Later pieces are gathered until the threshold, which grows with what was written.
        [UInt8](repeating: 8, count: 100).withUnsafeBytes { XCTAssertNil(w.write($0)) }
        XCTAssertEqual(w.flushed, Int64(FileWriter.first))
    }

    func testAFailedWriteIsReported() {
        let w = FileWriter(fd: -1, start: 0)
        let piece = [UInt8](repeating: 1, count: FileWriter.first)
        piece.withUnsafeBytes { XCTAssertEqual(w.write($0), EBADF) }
    }
}
