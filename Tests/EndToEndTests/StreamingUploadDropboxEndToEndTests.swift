import Foundation
import TestSupport
import XCTest

/// Dropbox: a big new file written into the mount goes up in an upload session whose slices
/// are sent while the program writes (release binary against the fixture), finished with `add`
/// at the close. A write behind what was sent falls back to the whole file; either way
/// Dropbox ends with exactly what was written.
final class StreamingUploadDropboxEndToEndTests: XCTestCase {
    private func mounted(_ s: DropboxServer) throws -> MountedFavFS {
        let remote = ConformanceRemote(url: "dropbox:///", options: ["client_id": s.clientID, "endpoint": s.endpoint, "slice_size": "4M"],
                                       secret: s.refreshToken)
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        try m.mountOrThrow(password: remote.secret)
        return m
    }

    func testSlicesGoWhileTheFileIsWritten() throws {
        try E2EGate.require(apache: false)
        let s = try DropboxServer.started()
        defer { s.remove() }
        let m = try mounted(s)
        defer { m.tearDown() }
        let first = StreamingUploadEndToEndTests.pattern(9 << 20), second = StreamingUploadEndToEndTests.pattern(6 << 20, seed: 4)
        let fd = open(m.path + "/big.bin", O_CREAT | O_WRONLY | O_EXCL, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        StreamingUploadEndToEndTests.write(fd, first, at: 0)
        let sent = { s.requests("upload_session/start HTTP/1.1\" 200") + s.requests("upload_session/append_v2 HTTP/1.1\" 200") }
        XCTAssertTrue(waitUntil(30) { sent() >= 2 }, "no slice was sent while the file was written:\n\(s.log().suffix(2000))")
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.root.appendingPathComponent("big.bin").path), "the file must appear only whole")
        StreamingUploadEndToEndTests.write(fd, second, at: first.count)
        XCTAssertEqual(close(fd), 0)
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("big.bin")), Data(first + second))
        XCTAssertEqual(sent(), 3, "15 MiB: three 4 MiB slices while written, the last 3 MiB with finish")
        XCTAssertEqual(s.requests("upload_session/finish HTTP/1.1\" 200"), 1)
        XCTAssertEqual(s.requests("files/upload HTTP/1.1"), 0, "the whole file was uploaded again")
    }

    func testAWriteBehindWhatWasSentUploadsTheWholeFile() throws {
        try E2EGate.require(apache: false)
        let s = try DropboxServer.started()
        defer { s.remove() }
        let m = try mounted(s)
        defer { m.tearDown() }
        var model = StreamingUploadEndToEndTests.pattern(12 << 20, seed: 2)
        let fd = open(m.path + "/edited.bin", O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        StreamingUploadEndToEndTests.write(fd, model, at: 0)
        XCTAssertTrue(waitUntil(30) { s.requests("upload_session/start") >= 1 }, "the stream did not start")
        let patch = [UInt8](repeating: 0x42, count: 10_000)
        StreamingUploadEndToEndTests.write(fd, patch, at: 1_000)
        model.replaceSubrange(1_000..<11_000, with: patch)
        XCTAssertEqual(close(fd), 0)
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("edited.bin")), Data(model))
    }
}
