import Foundation
import TestSupport
import XCTest

/// Paths the tests never met before: the steps of pjdfstest's chmod/03.t on WebDAV (a path
/// Apache's disk cannot hold) and programs whose FUSE requests are interrupted by signals.
/// Each once corrupted the daemon's heap, and with it the placeholder database.
final class IntegrityEndToEndTests: XCTestCase {
    override func setUpWithError() throws {
        try E2EGate.require(apache: true)
    }

    /// 31 folders of 127 bytes and a 127-byte file name: a 4,095-byte path, more than Apache's
    /// disk holds (its MKCOL and PUT answer 403). The refused upload's content must be kept in
    /// lost+found, and the database must stay sound. Keeping it used FileManager.copyItem,
    /// which writes out of bounds for a destination path over PATH_MAX.
    func testAFileTooDeepForTheServerIsKeptAndTheDatabaseStaysSound() throws {
        let server = try ApacheServer()
        defer { server.remove() }
        try server.start()
        let m = try MountedFavFS(remote: server.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow()
        var path = ""
        for i in 1...31 { path += String(repeating: "c", count: 126) + "\(i % 10)/" }
        path += String(repeating: "f", count: 127)
        let folder = (path as NSString).deletingLastPathComponent
        let script = """
            cd \(shq(m.path)) && mkdir -p \(shq(folder)); printf 'deep content' > \(shq(path)); \
            chmod 0642 \(shq(path)); stat -c %a \(shq(path)) >/dev/null; true
            """
        _ = try TimedProcess.sh(script, timeout: 60)
        // The folder the server's disk cannot hold: ENAMETOOLONG, not EACCES.
        let tooDeep = folder + "/" + String(repeating: "d", count: 126)
        let mkdir = try TimedProcess.sh("cd \(shq(m.path)) && mkdir -p \(shq(tooDeep + "/" + String(repeating: "e", count: 126)))", timeout: 60)
        if !FileManager.default.fileExists(atPath: server.documentRoot.path + "/" + tooDeep) {
            XCTAssertTrue(!mkdir.succeeded && mkdir.stderr.contains("File name too long"), "\(mkdir)")
        }
        let lost = m.cacheDir.appendingPathComponent("lost+found")
        let deadline = Date().addingTimeInterval(30)
        var kept: [String] = []
        while Date() < deadline {
            kept = (try? FileManager.default.contentsOfDirectory(atPath: lost.path)) ?? []
            if !kept.isEmpty { break }
            usleep(200_000)
        }
        let log = (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
        if FileManager.default.fileExists(atPath: server.documentRoot.path + "/" + path) {
            // A server whose disk holds it after all: nothing to keep.
            return
        }
        XCTAssertEqual(kept.count, 1, "the refused content is not in lost+found: \(kept); log: \(log.suffix(2000))")
        if let name = kept.first {
            XCTAssertLessThanOrEqual(name.utf8.count, 255)
            XCTAssertEqual(FileManager.default.contents(atPath: lost.appendingPathComponent(name).path), Data("deep content".utf8))
        }
        _ = try TimedProcess.sh("cd \(shq(m.path)) && rm -rf \(shq(String(path.prefix(127))))", timeout: 60)
        // A listing save walks the placeholders of the whole subtree: the damage showed there.
        _ = try TimedProcess.sh("ls -lR \(shq(m.path)) >/dev/null 2>&1; true", timeout: 60)
        XCTAssertFalse(log.contains("malformed"), log)
        XCTAssertTrue(try m.unmount().succeeded)
        let check = try TimedProcess.run("/usr/bin/sqlite3", ["-readonly", m.placeholderDB.path, "PRAGMA integrity_check"], timeout: 30)
        XCTAssertEqual(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "ok", "\(check)")
    }

    /// A file created with umask 022 is 0644 on the served folder too, also after it is
    /// rewritten, and a folder 0755: never the daemon's private umask (077).
    func testUploadedFilesKeepTheModesTheyWereCreatedWith() throws {
        let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-modes-\(UUID().uuidString.prefix(8))")
        let served = work.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let m = try MountedFavFS(remote: "file://" + served.path)
        defer { m.tearDown() }
        try m.mountOrThrow()
        let r = try TimedProcess.sh("""
            umask 022 && mkdir \(shq(m.path + "/dir")) && echo one > \(shq(m.path + "/dir/a.txt")) && \
            sync \(shq(m.path + "/dir/a.txt")) && echo two >> \(shq(m.path + "/dir/a.txt")) && sync \(shq(m.path + "/dir/a.txt"))
            """, timeout: 60)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(try m.unmount().succeeded)
        func mode(_ path: String) -> Int {
            var st = stat()
            return stat(path, &st) == 0 ? Int(st.st_mode & 0o7777) : -1
        }
        XCTAssertEqual(mode(served.path + "/dir"), 0o755)
        XCTAssertEqual(mode(served.path + "/dir/a.txt"), 0o644)
        XCTAssertEqual(FileManager.default.contents(atPath: served.path + "/dir/a.txt"), Data("one\ntwo\n".utf8))
    }

    /// Requests interrupted by signals before the daemon registered for their interrupts:
    /// libfuse then calls the interrupt callback from inside `fuse_req_interrupt_func` and
    /// unlocks the freed request if the callback replied. A probe preloaded into the daemon
    /// counts such replies (it must see none); afterwards the database is sound, nothing is
    /// left waiting for an upload (a rename racing a close's upload left one forever) and
    /// unmount returns.
    func testInterruptedRequestsNeverCorruptTheDaemon() throws {
        let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-storm-\(UUID().uuidString.prefix(8))")
        let served = work.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let fixtures = FavFSBinary.packageRoot.appendingPathComponent("Tests/Fixtures")
        let probe = work.appendingPathComponent("interrupt_probe.so").path, storm = work.appendingPathComponent("signal_storm").path
        let build = try TimedProcess.sh("""
            cc -shared -fPIC -O2 -o \(shq(probe)) \(shq(fixtures.appendingPathComponent("interrupt_probe.c").path)) \
                $(pkg-config --cflags --libs fuse3) -ldl && \
            cc -O2 -o \(shq(storm)) \(shq(fixtures.appendingPathComponent("signal_storm.c").path))
            """, timeout: 120)
        XCTAssertTrue(build.succeeded, "\(build)")
        guard build.succeeded else { return }

        let m = try MountedFavFS(remote: "file://" + served.path)
        defer { m.tearDown() }
        setenv("LD_PRELOAD", probe, 1)
        let mounted = Result { try m.mountOrThrow() }
        unsetenv("LD_PRELOAD")
        try mounted.get()
        let r = try TimedProcess.run(storm, [m.path, "4", "8", "200"], timeout: 120)
        XCTAssertFalse(r.timedOut, "\(r)")
        guard let pid = MountedFavFS.processes(mentioning: m.path).first else { return XCTFail("the daemon is gone after the storm") }
        let unmount = try m.unmount(timeout: 120)
        XCTAssertTrue(unmount.succeeded, "\(unmount)")
        XCTAssertLessThan(unmount.elapsed, 60, "unmount waited for uploads that never end")
        let deadline = Date().addingTimeInterval(20)
        while kill(pid, 0) == 0 && Date() < deadline { usleep(100_000) }
        let log = (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
        let line = log.split(separator: "\n").last { $0.hasPrefix("interrupt-probe:") }.map(String.init)
        let counts = line.map { $0.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) } } ?? []
        XCTAssertEqual(counts.count, 3, "the probe reported nothing: \(log.suffix(1500))")
        if counts.count == 3 {
            XCTAssertGreaterThan(counts[0], 100, "few requests registered for interrupts: \(line!)")
            XCTAssertEqual(counts[2], 0, "replies sent from inside fuse_req_interrupt_func (use after free): \(line!)")
            if counts[1] == 0 { print("IntegrityEndToEndTests: no request was interrupted before it registered this run (\(line!))") }
        }
        XCTAssertFalse(log.contains("malformed"))
        XCTAssertFalse(log.contains("UNIQUE constraint failed"), "two items recorded with one cache file")
        let check = try TimedProcess.run("/usr/bin/sqlite3", ["-readonly", m.placeholderDB.path, "PRAGMA integrity_check"], timeout: 30)
        XCTAssertEqual(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "ok", "\(check)")
    }

    /// An open truncating a file races a rename of it (`Tests/Fixtures/open_rename_race.c`), on
    /// a local folder and on WebDAV: each open that wrote finds its bytes on the server under
    /// the new name, each that found no file leaves the old content there, and nothing is
    /// recorded under the old name. The open's journal row once landed under the name the
    /// rename had just left: the moved file's cache file was named twice (SQLite's UNIQUE on
    /// content.file, the signal storm's failure above), an upload of an item gone was asked
    /// for, and the written bytes never reached the server.
    func testOpensTruncatingAFileWhileItIsRenamedLoseNothing() throws {
        let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-open-rename-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let race = work.appendingPathComponent("open_rename_race").path
        let source = FavFSBinary.packageRoot.appendingPathComponent("Tests/Fixtures/open_rename_race.c").path
        let build = try TimedProcess.sh("cc -O2 -pthread -o \(shq(race)) \(shq(source))", timeout: 120)
        XCTAssertTrue(build.succeeded, "\(build)")
        guard build.succeeded else { return }
        let count = 300
        let apache = try ApacheServer()
        defer { apache.remove() }
        try apache.start()
        let local = work.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: local, withIntermediateDirectories: true)
        for (remote, served) in [("file://" + local.path, local), (apache.davURL, apache.documentRoot)] {
            for i in 0..<count { try Data("old content \(i)\n".utf8).write(to: served.appendingPathComponent("f\(i)")) }
            let m = try MountedFavFS(remote: remote)
            defer { m.tearDown() }
            try m.mountOrThrow()
            _ = try TimedProcess.sh("ls \(shq(m.path)) >/dev/null", timeout: 60)
            let r = try TimedProcess.run(race, [m.path, "\(count)"], timeout: 240)
            XCTAssertTrue(r.succeeded, "\(remote): \(r)")
            let unmount = try m.unmount(timeout: 120)
            XCTAssertTrue(unmount.succeeded, "\(remote): \(unmount)")
            var written = 0
            for line in r.stdout.split(separator: "\n") {
                let parts = line.split(separator: " ")
                guard parts.count == 2, let i = Int(parts[0]) else { continue }
                let now = (try? String(contentsOf: served.appendingPathComponent("g\(i)"), encoding: .utf8)) ?? "(none)"
                switch parts[1] {
                case "written": written += 1; XCTAssertEqual(now, "new", "\(remote): g\(i) was written through the mount")
                case "absent": XCTAssertEqual(now, "old content \(i)\n", "\(remote): g\(i) was never opened")
                default: XCTFail("\(remote): the open of f\(i) failed: \(line)")
                }
            }
            XCTAssertGreaterThan(written, 0, "\(remote): no open won the race: \(r.stdout.suffix(500))")
            let left = try FileManager.default.contentsOfDirectory(atPath: served.path).filter { $0.hasPrefix("f") }
            XCTAssertEqual(left, [], "\(remote): files under the old names")
            let log = (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
            for problem in ["UNIQUE constraint failed", "the item to upload is gone", "the cached content to upload is missing"] {
                XCTAssertFalse(log.contains(problem), "\(remote): \(problem): \(m.logProblems())")
            }
            let check = try TimedProcess.run("/usr/bin/sqlite3", ["-readonly", m.placeholderDB.path,
                                                                  "PRAGMA integrity_check; SELECT COUNT(*) FROM journal"], timeout: 30)
            XCTAssertEqual(check.stdout.split(separator: "\n"), ["ok", "0"], "\(remote): a sound database, no change left unsent: \(check)")
        }
    }

    /// Atomic saves (write a temporary file, rename it over the target) while other programs
    /// read the target and walk its folder in name order (read-ahead across files fetches the
    /// target as it is replaced): every save reaches the server, the last one wins, nothing is
    /// recorded twice and nothing goes to lost+found. An open or a read-ahead racing the rename
    /// once emptied the renamed content or recorded the old content over it.
    func testAtomicSavesWhileTheTargetIsReadAndWalkedLoseNothing() throws {
        let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-saves-\(UUID().uuidString.prefix(8))")
        let served = work.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: served.appendingPathComponent("d"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        for name in ["a", "b", "c", "target", "z"] { try Data("initial \(name)\n".utf8).write(to: served.appendingPathComponent("d/\(name)")) }
        let m = try MountedFavFS(remote: "file://" + served.path)
        defer { m.tearDown() }
        try m.mountOrThrow()
        let d = shq(m.path + "/d")
        let r = try TimedProcess.sh("""
            cd \(d) || exit 1
            ( for i in $(seq 1 300); do printf 'save %d\\n' $i > .tmp-$i && mv .tmp-$i target || exit 1; done ) &
            w=$!
            ( for i in $(seq 1 300); do cat target > /dev/null 2>&1; done ) &
            ( for i in $(seq 1 100); do cat a b c target z > /dev/null 2>&1; done ) &
            wait $w || exit 1
            wait
            """, timeout: 300)
        XCTAssertTrue(r.succeeded, "\(r)\n\(m.logProblems())")
        XCTAssertEqual(try String(contentsOfFile: m.path + "/d/target", encoding: .utf8), "save 300\n", "read through the mount")
        let unmount = try m.unmount(timeout: 120)
        XCTAssertTrue(unmount.succeeded, "\(unmount)")
        XCTAssertEqual(try String(contentsOf: served.appendingPathComponent("d/target"), encoding: .utf8), "save 300\n",
                       "the last save did not reach the server")
        let log = (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
        XCTAssertFalse(log.contains("UNIQUE constraint failed"), String(log.suffix(3000)))
        XCTAssertFalse(log.contains("the cached content to upload is missing"), String(log.suffix(3000)))
        let lost = (try? FileManager.default.contentsOfDirectory(atPath: m.cacheDir.appendingPathComponent("lost+found").path)) ?? []
        XCTAssertEqual(lost, [], "content went to lost+found")
        let check = try TimedProcess.run("/usr/bin/sqlite3", ["-readonly", m.placeholderDB.path, "PRAGMA integrity_check"], timeout: 30)
        XCTAssertEqual(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "ok", "\(check)")
    }
}
