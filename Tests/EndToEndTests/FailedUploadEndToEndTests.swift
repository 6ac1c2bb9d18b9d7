import Foundation
import TestSupport
import XCTest

/// Uploads that cannot succeed as they are, against a real Apache: the folder of a pending
/// upload deleted on the server (re-created, the file uploaded where the user put it), and a
/// server that refuses the upload for good (`LimitRequestBody`: 413), whose content goes to
/// lost+found instead of being retried forever or holding up the unmount. Mounted with
/// `--fsync remote`, whose fsync answers what the server did with the upload.
final class FailedUploadEndToEndTests: XCTestCase {
    func testAFolderDeletedOnTheServerIsRecreatedForAPendingUpload() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--fsync", "remote"])
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

    /// A file the server refuses for good (here: larger than its LimitRequestBody) stays in the
    /// mount as written, marked "upload refused", with a copy in lost+found; it is not sent
    /// again (neither by a retry nor at the next mount) until it changes; a rename tries its new
    /// name; removing it removes it; unmount never waits for it.
    func testAnUploadRefusedForGoodStaysVisibleAndGoesToLostAndFound() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer.refusingLargeUploads()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--fsync", "remote"])
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
        // A copy, byte for byte, in lost+found; the file stays in the mount, marked refused.
        let lost = m.cacheDir.appendingPathComponent("lost+found")
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: lost.path)) ?? []
        XCTAssertEqual(kept.count, 1, "\(kept)")
        XCTAssertTrue(kept.first?.hasSuffix(" small%2Fbig.bin") == true, "\(kept)")
        XCTAssertEqual(kept.first.flatMap { FileManager.default.contents(atPath: lost.appendingPathComponent($0).path) }, payload)
        XCTAssertFalse(FileManager.default.fileExists(atPath: apache.documentRoot.appendingPathComponent("small/big.bin").path))
        XCTAssertEqual(FileManager.default.contents(atPath: m.path + "/small/big.bin"), payload, "a refused file must stay as written")
        let state = try Python.getxattr(m.path + "/small/big.bin", "user.favfs.state")
        XCTAssertTrue(state.hasPrefix("upload refused: ") && state.contains("413"), state)
        let status = try TimedProcess.run(FavFSBinary.path, ["status"], timeout: 30)
        XCTAssertTrue(status.stdout.contains("lost+found: 1 file not on the server"), status.stdout)
        XCTAssertTrue(status.stdout.contains("uploads: 0 pending"), status.stdout)
        XCTAssertTrue(status.stdout.contains("refused upload") && status.stdout.contains("/small/big.bin"), status.stdout)
        // Nothing left to wait for at unmount; the next mount does not send it again.
        let unmountStarted = Date()
        let unmounted = try m.unmount()
        XCTAssertTrue(unmounted.succeeded, "\(unmounted)")
        XCTAssertLessThan(Date().timeIntervalSince(unmountStarted), 10, "unmount waited for an upload that cannot succeed")
        XCTAssertTrue(unmounted.stderr.contains("refused by the server") && unmounted.stderr.contains("/small/big.bin"),
                      "unmount did not say which file the server refused: \(unmounted)")
        let requestsBefore = apache.accessLogLines().filter { $0.hasPrefix("PUT ") }.count
        try m.mountOrThrow(extraArgs: ["--fsync", "remote"])
        XCTAssertEqual(FileManager.default.contents(atPath: m.path + "/small/big.bin"), payload, "after a remount")
        let again = try Python.getxattr(m.path + "/small/big.bin", "user.favfs.state")
        XCTAssertTrue(again.hasPrefix("upload refused: "), again)
        usleep(1_500_000)
        XCTAssertEqual(apache.accessLogLines().filter { $0.hasPrefix("PUT ") }.count, requestsBefore,
                       "a refused file was sent again at mount")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: lost.path).count, 1)
        // Renamed out of the limited folder: the new name is uploaded.
        let mv = try TimedProcess.sh("mv \(shq(m.path))/small/big.bin \(shq(m.path))/big.bin", timeout: 60)
        XCTAssertTrue(mv.succeeded, "\(mv)")
        let uploaded = apache.documentRoot.appendingPathComponent("big.bin").path
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && FileManager.default.contents(atPath: uploaded) != payload { usleep(100_000) }
        XCTAssertEqual(FileManager.default.contents(atPath: uploaded), payload, "the renamed file was not uploaded under its new name")
        let listing = try TimedProcess.sh("ls -la \(shq(m.path))/small", timeout: 30)
        XCTAssertFalse(listing.stdout.contains("big.bin"), "\(listing)")
        // Another refused file, removed by the user: gone from the mount, its copy stays.
        XCTAssertFalse(try TimedProcess.sh("dd if=/dev/zero of=\(shq(m.path))/small/z.bin bs=3000 count=1 conv=fsync status=none", timeout: 60).succeeded,
                       "dd's fsync should report the refusal")
        XCTAssertTrue(FileManager.default.fileExists(atPath: m.path + "/small/z.bin"))
        XCTAssertTrue(try TimedProcess.sh("rm \(shq(m.path))/small/z.bin", timeout: 60).succeeded)
        XCTAssertFalse(FileManager.default.fileExists(atPath: m.path + "/small/z.bin"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: lost.path).count, 2)
        XCTAssertTrue(try m.unmount().succeeded)
    }
}
