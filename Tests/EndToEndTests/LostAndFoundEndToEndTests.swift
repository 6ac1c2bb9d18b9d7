import Foundation
import TestSupport
import XCTest

/// The journal is the truth about dirty data, and content is never deleted because the database
/// lost track of it: with the placeholder database overwritten (a user clearing a cache, a disk
/// error) while a file was dirty, the next mount starts a new database and keeps the content in
/// CACHEDIR/lost+found, which `favfs status` names. Also: the cache is private.
final class LostAndFoundEndToEndTests: XCTestCase {
    func testADamagedDatabaseLosesNoDirtyContent() throws {
        try E2EGate.require(apache: false)
        let base = URL(fileURLWithPath: "/tmp/favfs-lost-\(UUID().uuidString.prefix(8))")
        let served = base.appendingPathComponent("served"), cache = base.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let src = base.appendingPathComponent("payload.bin")
        try payload.write(to: src)

        let first = try MountedFavFS(remote: "file://" + served.path, cacheDir: cache)
        try first.mountOrThrow()
        // Private by default: the cache folder, its database and its content are the user's only.
        for (path, mode) in [(cache.path, 0o700), (first.placeholderDB.path, 0o600), (cache.appendingPathComponent("favfs.log").path, 0o600)] {
            var st = stat()
            XCTAssertEqual(stat(path, &st), 0, path)
            XCTAssertEqual(Int(st.st_mode & 0o777), mode, "mode of \(path)")
        }
        guard let pid = MountedFavFS.processes(mentioning: first.path).first else { return XCTFail("no daemon") }
        // Held open: the close that would start the upload never comes; then the daemon dies.
        let r = try TimedProcess.sh("exec 3>\(shq(first.path + "/held.bin")) && cat \(shq(src.path)) >&3 && kill -9 \(pid)", timeout: 60)
        XCTAssertTrue(r.succeeded, "\(r)")
        first.tearDown()
        XCTAssertNil(FileManager.default.contents(atPath: served.appendingPathComponent("held.bin").path), "it was uploaded after all")

        // The database is overwritten with garbage, its journal with it.
        try Data(repeating: 0x42, count: 64 << 10).write(to: first.placeholderDB)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: first.placeholderDB.path + suffix) }

        let second = try MountedFavFS(remote: "file://" + served.path, cacheDir: cache)
        defer { second.tearDown() }
        try second.mountOrThrow()
        let lost = cache.appendingPathComponent("lost+found")
        let kept = try FileManager.default.contentsOfDirectory(atPath: lost.path)
        XCTAssertEqual(kept.count, 1, "\(kept)")
        XCTAssertEqual(kept.first.flatMap { FileManager.default.contents(atPath: lost.appendingPathComponent($0).path) }, payload,
                       "the dirty content is not in lost+found intact")
        let damaged = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasPrefix("placeholders.sqlite.damaged-") }
        XCTAssertFalse(damaged.isEmpty, "the damaged database was not kept aside")
        let status = try TimedProcess.run(FavFSBinary.path, ["status"], timeout: 30)
        XCTAssertTrue(status.stdout.contains("lost+found: 1 file not on the server"), status.stdout)
        // Unmounting (which evicts) leaves lost+found alone.
        XCTAssertTrue(try second.unmount().succeeded)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: lost.path).count, 1)
    }
}
