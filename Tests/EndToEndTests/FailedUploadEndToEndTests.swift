import Foundation
import TestSupport
import XCTest

/// Uploads that cannot succeed as they are, against a real Apache: the folder of a pending
/// upload deleted on the server (re-created, the file uploaded where the user put it), and a
/// server that refuses the upload for good (`LimitRequestBody`: 413), whose content goes to
/// lost+found instead of being retried forever or holding up the unmount.
final class FailedUploadEndToEndTests: XCTestCase {
    func testAFolderDeletedOnTheServerIsRecreatedForAPendingUpload() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow()
        XCTAssertEqual(mkdir(m.path + "/reports", 0o755), 0)
        XCTAssertEqual(mkdir(m.path + "/reports/2026", 0o755), 0)
        let payload = Array("quarterly numbers\n".utf8)
        let fd = open(m.path + "/reports/2026/q4.txt", O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(payload.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, payload.count)
        // Someone deletes the whole folder on the server while the file is still being written.
        try FileManager.default.removeItem(at: apache.documentRoot.appendingPathComponent("reports"))
        let started = Date()
        XCTAssertEqual(fsync(fd), 0, "fsync: \(String(cString: strerror(errno)))")
        let took = Date().timeIntervalSince(started)
        close(fd)
        XCTAssertLessThan(took, 30, "fsync took \(took) s")
        XCTAssertEqual(FileManager.default.contents(atPath: apache.documentRoot.appendingPathComponent("reports/2026/q4.txt").path),
                       Data(payload), "the file is not on the server where it was written")
        XCTAssertEqual(try String(contentsOfFile: m.path + "/reports/2026/q4.txt", encoding: .utf8), "quarterly numbers\n")
        let log = (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
        XCTAssertTrue(log.contains("re-created 2 folder(s)"), "the log should say what happened")
        XCTAssertTrue(try m.unmount().succeeded)
        print("upload into a folder deleted on the server: fsync \(String(format: "%.2f", took)) s, folders re-created")
    }

    func testAnUploadRefusedForGoodGoesToLostAndFound() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer(extraConfig: """
            <Location /files/small>
                LimitRequestBody 1000
            </Location>
            """)
        try FileManager.default.createDirectory(at: apache.documentRoot.appendingPathComponent("small"), withIntermediateDirectories: true)
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow()
        let payload = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let fd = open(m.path + "/small/big.bin", O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(payload.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, payload.count)
        let started = Date()
        let rc = fsync(fd)
        let err = errno
        close(fd)
        XCTAssertEqual(rc, -1, "fsync should report the refusal")
        XCTAssertEqual(err, EFBIG, String(cString: strerror(err)))
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
        // Kept, byte for byte, in lost+found; not retried; the mount shows the server's state.
        let lost = m.cacheDir.appendingPathComponent("lost+found")
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: lost.path)) ?? []
        XCTAssertEqual(kept.count, 1, "\(kept)")
        XCTAssertTrue(kept.first?.hasSuffix(" small%2Fbig.bin") == true, "\(kept)")
        XCTAssertEqual(kept.first.flatMap { FileManager.default.contents(atPath: lost.appendingPathComponent($0).path) }, payload)
        XCTAssertFalse(FileManager.default.fileExists(atPath: apache.documentRoot.appendingPathComponent("small/big.bin").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: m.path + "/small/big.bin"), "a file the server refused is still shown")
        let status = try TimedProcess.run(FavFSBinary.path, ["status"], timeout: 30)
        XCTAssertTrue(status.stdout.contains("lost+found: 1 files"), status.stdout)
        XCTAssertFalse(status.stdout.contains("failed"), status.stdout)
        // Nothing left to wait for at unmount.
        let unmountStarted = Date()
        XCTAssertTrue(try m.unmount(keepCache: true).succeeded)
        XCTAssertLessThan(Date().timeIntervalSince(unmountStarted), 10, "unmount waited for an upload that cannot succeed")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: lost.path).count, 1)
    }
}
