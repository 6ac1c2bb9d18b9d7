import Foundation
import TestSupport
import XCTest

/// fsync's two promises against Apache mod_dav. `--fsync remote`: while another thread keeps
/// writing the same file, fsync returns once what was written before it is on the server, not
/// when the file stops changing (which, for a file written all the time, was never). The
/// default, `--fsync local`: fsync returns without the server (here: hung), and the content
/// survives the daemon killed with -9 right after it; the next mount uploads it.
final class FsyncEndToEndTests: XCTestCase {
    func testRemoteFsyncReturnsWhileAnotherThreadKeepsWriting() throws {
        let (apache, m) = try mountedOverApache(extraArgs: ["--fsync", "remote"])

        let path = m.path + "/busy.bin"
        let fd = open(path, O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let chunk = [UInt8](repeating: 0x5A, count: 64 << 10)
        let stop = ManagedAtomicFlag()
        // The writer stops by itself after 20 s, so a fsync that waits for it fails, not hangs.
        let writer = Thread {
            var offset: off_t = 0
            let end = Date().addingTimeInterval(21)
            while !stop.isSet && Date() < end {
                let n = chunk.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, offset) }
                if n > 0 { offset += off_t(n) }
                usleep(5_000)
            }
        }
        writer.start()
        defer { stop.set() }
        usleep(1_000_000)
        var st = stat()
        XCTAssertEqual(fstat(fd, &st), 0)
        let before = Int(st.st_size)
        let started = Date()
        XCTAssertEqual(fsync(fd), 0, String(cString: strerror(errno)))
        let took = Date().timeIntervalSince(started)
        // The writer goes on for about 20 s more; fsync must not wait for it (generous margin).
        XCTAssertLessThan(took, 10, "fsync waited for later writes")
        let onServer = (try? Data(contentsOf: apache.documentRoot.appendingPathComponent("busy.bin")))?.count ?? 0
        XCTAssertGreaterThanOrEqual(onServer, before, "fsync returned before the bytes written before it were on the server")
        print("fsync with a busy writer: \(String(format: "%.2f", took)) s; \(before) bytes before it, \(onServer) on the server after")
        usleep(3_000_000)
        stop.set()
        while !writer.isFinished { usleep(10_000) }
        XCTAssertEqual(fstat(fd, &st), 0)
        let final = Int(st.st_size)
        close(fd)
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual((try? Data(contentsOf: apache.documentRoot.appendingPathComponent("busy.bin")))?.count, final)
    }
    func testLocalFsyncNeedsNoServerAndSurvivesKill9() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        try apache.start()
        defer { apache.resume(); apache.remove() }
        let scratch = URL(fileURLWithPath: "/tmp/favfs-fsync-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cache = scratch.appendingPathComponent("cache")
        let first = try MountedFavFS(remote: apache.davURL, cacheDir: cache)
        defer { first.tearDown() }
        try first.mountOrThrow(extraArgs: ["--timeout", "5"])
        let daemons = MountedFavFS.processes(mentioning: first.path)
        XCTAssertEqual(daemons.count, 1, "one favfs daemon per mount")
        guard let pid = daemons.first else { return }
        XCTAssertEqual(try TimedProcess.sh("ls \(shq(first.path))", timeout: 30).status, 0)

        apache.pause()  // nothing answers: an fsync that waited for the upload would time out
        let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let fd = open(first.path + "/db.bin", O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0, String(cString: strerror(errno)))
        XCTAssertEqual(payload.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, payload.count)
        let started = Date()
        XCTAssertEqual(fsync(fd), 0, "fsync with the server hung: \(String(cString: strerror(errno)))")
        let took = Date().timeIntervalSince(started)
        XCTAssertLessThan(took, 4, "fsync waited for the server (the mount's --timeout is 5 s)")
        // Killed before any close: only what fsync made durable can bring the bytes back.
        XCTAssertEqual(kill(pid, SIGKILL), 0)
        close(fd)
        first.tearDown()
        apache.resume()
        XCTAssertNil(try? Data(contentsOf: apache.documentRoot.appendingPathComponent("db.bin")), "uploaded before the kill?")

        let second = try MountedFavFS(remote: apache.davURL, cacheDir: cache)
        defer { second.tearDown() }
        try second.mountOrThrow()
        XCTAssertTrue(try second.unmount(timeout: 120).succeeded)
        XCTAssertEqual(try? Data(contentsOf: apache.documentRoot.appendingPathComponent("db.bin")), payload,
                       "the fsynced content did not reach the server after the kill")
        print("local fsync with the server hung: \(String(format: "%.3f", took)) s")
    }

    /// A file made here lives in the journal until it is uploaded (here: while it is open).
    /// Once its folder's fsync returned, the file's entry survives a power cut: its journal
    /// row is in the database file itself, not only in the write-ahead log, whose frames since
    /// the last sync a power cut may take. Checked by reading a copy of the database file
    /// without its log.
    func testFolderFsyncMakesAFileNotUploadedYetDurable() throws {
        try E2EGate.require(apache: false)
        let served = URL(fileURLWithPath: "/tmp/favfs-fsyncdir-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: served) }
        let m = try MountedFavFS(remote: "file://" + served.path)
        defer { m.tearDown() }
        try m.mountOrThrow()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m.path), [])

        let fd = open(m.path + "/made-here.txt", O_CREAT | O_WRONLY | O_EXCL, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0, String(cString: strerror(errno)))
        let content = Data("made here\n".utf8)
        XCTAssertEqual(content.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, content.count)
        let dir = open(m.path, O_RDONLY | O_DIRECTORY)
        XCTAssertGreaterThanOrEqual(dir, 0)
        XCTAssertEqual(fsync(dir), 0, "fsync of the folder: \(String(cString: strerror(errno)))")
        close(dir)

        let copy = m.base.appendingPathComponent("after-power-cut.sqlite")
        try? FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(at: m.placeholderDB, to: copy)
        let r = try TimedProcess.run("/usr/bin/python3", ["-c", """
            import sqlite3, sys
            db = sqlite3.connect("file:" + sys.argv[1] + "?immutable=1", uri=True)
            print("\\n".join(row[0] for row in db.execute("SELECT id FROM journal")))
            """, copy.path], timeout: 60)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertEqual(r.stdout.split(separator: "\n").map(String.init), ["/made-here.txt"],
                       "the journal in the database file alone, as a power cut would leave it: \(r.stdout)")

        close(fd)
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual(try Data(contentsOf: served.appendingPathComponent("made-here.txt")), content)
    }

    /// Files deleted right after their last close never reach the server: sqlite3's rollback
    /// journal (made, written, fsynced, closed and deleted at every commit), and a program's
    /// scratch file deleted a moment after it was closed. The close's upload waits a moment
    /// (`uploadCloseGrace`), so the delete comes first; when the upload started at the close, a
    /// delete coming even 2 ms later waited for it and then deleted the file at the server (a
    /// `PUT`, a `HEAD` and a `DELETE` for each). A few are allowed for a daemon the machine
    /// starves for longer than that moment.
    func testFilesDeletedRightAfterTheirCloseStayOffTheServer() throws {
        let (apache, m) = try mountedOverApache()
        let commits = 40, scratchFiles = 30
        var script = "CREATE TABLE t(a INTEGER, b TEXT);\n"
        for tx in 0..<commits {
            script += "BEGIN;\n" + (0..<20).map { "INSERT INTO t VALUES(\(tx * 20 + $0), 'row \(tx * 20 + $0)');\n" }.joined() + "COMMIT;\n"
        }
        let sqlite = try TimedProcess.run("/usr/bin/sqlite3", [m.path + "/db.sqlite"], stdin: script, timeout: 120)
        XCTAssertTrue(sqlite.succeeded, "\(sqlite)")
        let scratch = try TimedProcess.run("/usr/bin/python3", ["-c", """
            import os, sys, time
            for i in range(int(sys.argv[2])):
                path = os.path.join(sys.argv[1], "scratch-%d.tmp" % i)
                with open(path, "wb") as f:
                    f.write(b"intermediate result %d" % i)
                time.sleep(0.002)
                os.unlink(path)
            """, m.path, String(scratchFiles)], timeout: 120)
        XCTAssertTrue(scratch.succeeded, "\(scratch)")
        XCTAssertTrue(try m.unmount().succeeded)
        let log = apache.accessLogLines()
        let journal = log.filter { $0.contains("/db.sqlite-journal") }
        let scratchRequests = log.filter { $0.contains("/scratch-") }
        XCTAssertLessThanOrEqual(journal.count, 4, "\(commits) commits sent their journal to the server: \(journal.prefix(6))")
        XCTAssertLessThanOrEqual(scratchRequests.count, 6, "\(scratchFiles) scratch files reached the server: \(scratchRequests.prefix(6))")
        let check = try TimedProcess.run("/usr/bin/sqlite3", [apache.documentRoot.appendingPathComponent("db.sqlite").path,
                                                              "PRAGMA integrity_check; SELECT count(*) FROM t;"], timeout: 60)
        XCTAssertEqual(check.stdout, "ok\n\(commits * 20)\n", "\(check)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: apache.documentRoot.path).filter { $0.hasPrefix("scratch-") }, [])
        print("deleted right after their close: \(journal.count) request(s) for sqlite3's journal (\(commits) commits), \(scratchRequests.count) for \(scratchFiles) scratch files")
    }

    /// Many fsyncs in a row (a database's commits) become few uploads, soon after they stop.
    func testLocalFsyncsInARowAreUploadedOnceQuiet() throws {
        let (apache, m) = try mountedOverApache()
        let fd = open(m.path + "/log.bin", O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var expected = Data()
        for i in 0..<50 {
            let line = Data("commit \(i)\n".utf8)
            XCTAssertEqual(line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, line.count)
            XCTAssertEqual(fsync(fd), 0, String(cString: strerror(errno)))
            expected += line
        }
        // Still open: the upload comes from the fsyncs, once the file is quiet.
        let target = apache.documentRoot.appendingPathComponent("log.bin")
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && (try? Data(contentsOf: target)) != expected { usleep(100_000) }
        XCTAssertEqual(try? Data(contentsOf: target), expected, "the fsynced content was not uploaded while the file stayed open")
        let puts = apache.accessLogLines().filter { $0.hasPrefix("PUT ") && $0.contains("/log.bin ") }.count
        XCTAssertLessThanOrEqual(puts, 5, "50 fsyncs in a row made \(puts) uploads")
        close(fd)
        XCTAssertTrue(try m.unmount().succeeded)
        print("50 fsyncs in a row: \(puts) upload(s)")
    }
}

/// A flag set once, read from another thread.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
