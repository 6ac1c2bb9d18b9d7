import Foundation
import TestSupport
import XCTest

/// A kill between a confirmed PUT and the journal update: the server has the new bytes, the
/// journal still says "upload, based on the old version". The next mount must see that the
/// server already holds exactly this content and finish quietly — no conflict copy of a file
/// identical to itself. The state is made as the kill leaves it: the upload done, the daemon
/// killed with -9, and the journal row and placeholder version put back as they were before the
/// upload committed.
final class KillAfterUploadEndToEndTests: XCTestCase {
    func testAnUploadTheServerAlreadyHasIsNotAConflict() throws {
        try E2EGate.require(apache: true)
        guard let python = FavartServer.python else { throw XCTSkip("python3 is needed to edit the database") }
        let apache = try ApacheServer()
        try apache.start()
        defer { apache.remove() }
        let cache = URL(fileURLWithPath: "/tmp/favfs-killput-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: cache) }

        let first = try MountedFavFS(remote: apache.davURL, cacheDir: cache)
        // `--fsync remote`: each rewrite returns once the server confirmed its upload.
        try first.mountOrThrow(extraArgs: ["--fsync", "remote"])
        XCTAssertNil(TwoWritersEndToEndTests.rewrite(first.path + "/doc.txt", with: "first draft\n", create: true))
        let sql = { (statement: String) throws -> String in
            let r = try TimedProcess.run(python, ["-c", """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                rows = db.execute(sys.argv[2]).fetchall()
                db.commit()
                print("|".join(str(c) for row in rows for c in row))
                """, first.placeholderDB.path, statement], timeout: 30)
            guard r.succeeded else { throw ShellError("sqlite: \(r)") }
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let before = try sql("SELECT i.version, c.version FROM item i JOIN content c ON c.id = i.id WHERE i.id = '/doc.txt'")
        let parts = before.split(separator: "|").map(String.init)
        XCTAssertEqual(parts.count, 2, before)
        // The edit that will be "interrupted": uploaded and confirmed, then the kill.
        XCTAssertNil(TwoWritersEndToEndTests.rewrite(first.path + "/doc.txt", with: "second draft, longer\n"))
        guard let pid = MountedFavFS.processes(mentioning: first.path).first else { return XCTFail("no daemon") }
        kill(pid, SIGKILL)
        first.tearDown()
        XCTAssertEqual(try String(contentsOf: apache.documentRoot.appendingPathComponent("doc.txt"), encoding: .utf8), "second draft, longer\n")
        // As the kill after the PUT leaves it: the journal row still there, the old base version.
        _ = try sql("INSERT OR REPLACE INTO journal (id, baseVersion, isNew, since, attempts) VALUES ('/doc.txt', '\(parts[0].replacingOccurrences(of: "'", with: "''"))', 0, 1, 0)")
        _ = try sql("UPDATE item SET version = '\(parts[0].replacingOccurrences(of: "'", with: "''"))' WHERE id = '/doc.txt'")
        _ = try sql("UPDATE content SET version = '\(parts[1].replacingOccurrences(of: "'", with: "''"))' WHERE id = '/doc.txt'")

        let second = try MountedFavFS(remote: apache.davURL, cacheDir: cache)
        defer { second.tearDown() }
        try second.mountOrThrow()
        XCTAssertTrue(try second.unmount(keepCache: true).succeeded)  // waits for the resumed upload
        let names = try FileManager.default.contentsOfDirectory(atPath: apache.documentRoot.path)
        XCTAssertEqual(names, ["doc.txt"], "a conflict copy of identical content")
        XCTAssertEqual(try String(contentsOf: apache.documentRoot.appendingPathComponent("doc.txt"), encoding: .utf8), "second draft, longer\n")
        XCTAssertEqual(try sql("SELECT count(*) FROM journal"), "0", "the journal row stayed")
        let log = (try? String(contentsOf: cache.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
        XCTAssertTrue(log.contains("the server already has this content"), "the log should say why no conflict copy was made")
    }
}
