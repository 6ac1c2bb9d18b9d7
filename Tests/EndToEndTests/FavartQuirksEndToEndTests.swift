import Foundation
import XCTest
import TestSupport

/// A Favart mount against a fixture that behaves like the real favart-api (case-sensitive
/// extension filter, 500 for a missing folder, 400 and a truncated file for uploads over 25 MiB):
/// what the server would drop is refused with an errno before anything is sent, and the old
/// content is never lost.
final class FavartQuirksEndToEndTests: XCTestCase {
    func testWhatTheServerWouldDropIsRefusedAndNothingIsLost() throws {
        try E2EGate.require(apache: false)
        let server = try FavartServer.started()
        defer { server.remove() }
        let original = Data(repeating: 0xAB, count: 1000)
        try original.write(to: server.root.appendingPathComponent("keep.jpg"))
        let m = try MountedFavFS(remote: server.url)
        defer { m.tearDown() }
        try m.mountOrThrow()

        func errnoOf(_ body: () -> Int32) -> Int32 { errno = 0; return body() < 0 ? errno : 0 }
        // A name the case-sensitive filter would never list: refused at create, nothing stranded.
        XCTAssertEqual(errnoOf { open(m.path + "/photo.JPG", O_CREAT | O_WRONLY, 0o644) }, EOPNOTSUPP, "photo.JPG")
        XCTAssertEqual(errnoOf { open(m.path + "/notes.txt", O_CREAT | O_WRONLY, 0o644) }, EOPNOTSUPP, "notes.txt")
        XCTAssertEqual(errnoOf { mkdir(m.path + "/album.jpg", 0o755) }, EOPNOTSUPP, "a folder named like an image")
        // A folder with an upper-case extension is a folder to the server and to favfs.
        XCTAssertEqual(mkdir(m.path + "/Album.JPG", 0o755), 0, String(cString: strerror(errno)))
        var isDir: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: server.root.appendingPathComponent("Album.JPG").path, isDirectory: &isDir) && isDir.boolValue)

        // Past 25 MiB: EFBIG at the write, and the server's file keeps its bytes.
        let fd = open(m.path + "/keep.jpg", O_WRONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let byte: [UInt8] = [1]
        errno = 0
        let n = byte.withUnsafeBytes { pwrite(fd, $0.baseAddress, 1, off_t(25 << 20)) }
        XCTAssertEqual(n, -1)
        XCTAssertEqual(errno, EFBIG)
        XCTAssertEqual(errnoOf { ftruncate(fd, off_t(25 << 20) + 1) }, EFBIG)
        close(fd)
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual(try Data(contentsOf: server.root.appendingPathComponent("keep.jpg")), original, "the server's file changed")
        let log = server.log()
        XCTAssertFalse(log.contains("photo.JPG") || log.contains("notes.txt") || log.contains("album.jpg"), "a refused name reached the server")
        XCTAssertFalse(log.contains("POST /file?path=&id=keep.jpg") && log.contains(" 400 "), "an oversized upload was sent")
    }
}
