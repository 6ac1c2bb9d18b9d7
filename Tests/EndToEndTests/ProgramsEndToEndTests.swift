import Foundation
import Testing
import TestSupport

/// Real programs doing their own thing in a mount, on every writable remote: `git` (clone,
/// commit, fsck), `tar x` (many small files, times and modes set after writing) and `sqlite3`
/// (transactions with fsync'ed rollback journals). Each is then checked from a new cache dir
/// (another computer): what the server holds is whole and what the program wrote.
@Suite(.serialized)
struct ProgramsEndToEndTests {
    struct Target: Sendable, CustomStringConvertible {
        let server: any ConformanceServer
        var description: String { server.name }
    }
    // Favart stores only images.
    /// FAVFS_PROGRAM_REMOTES=NAME,NAME runs those only (for debugging one).
    static let targets = ConformanceServers.all.filter { $0.traits.writable && $0.name != "favart" }
        .filter { s in ProcessInfo.processInfo.environment["FAVFS_PROGRAM_REMOTES"].map { $0.split(separator: ",").contains(Substring(s.name)) } ?? true }
        .map(Target.init)

    @discardableResult
    static func run(_ tool: String, _ args: [String], cwd: String? = nil, stdin: String? = nil) throws -> String {
        let r = try Shell.run(tool, args, stdin: stdin, environment: ["HOME": "/tmp", "PATH": "/usr/bin:/bin",
                                                                     "GIT_AUTHOR_NAME": "favfs", "GIT_AUTHOR_EMAIL": "t@favfs",
                                                                     "GIT_COMMITTER_NAME": "favfs", "GIT_COMMITTER_EMAIL": "t@favfs"],
                              cwd: cwd)
        guard r.status == 0 else {
            throw ShellError("\(tool) \(args.joined(separator: " ")) failed (\(r.status)): \(r.error.suffix(600))")
        }
        return r.output
    }

    /// Runs a program in mount `m`; when it fails, the error says what the daemon logged last.
    @discardableResult
    static func run(in m: MountedFavFS, _ tool: String, _ args: [String], cwd: String? = nil, stdin: String? = nil) throws -> String {
        do { return try run(tool, args, cwd: cwd, stdin: stdin) } catch {
            throw ShellError("\(error)\n— the daemon's last log lines:\n\(m.logTail())")
        }
    }

    /// A mount of `t`'s server, started, with a new folder named `label-…` in it.
    static func mount(_ t: Target, withFolder label: String) throws -> (MountedFavFS, ConformanceRemote, String) {
        try t.server.start()
        let root = "\(label)-\(UUID().uuidString.prefix(6).lowercased())"
        try t.server.seed(files: [:], folders: [root])
        let remote = t.server.remote()
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        do { try m.mountOrThrow(password: remote.secret) } catch { m.tearDown(); throw error }
        return (m, remote, root)
    }

    /// A repository with three commits of a small tree.
    static func makeRepository(at dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try run("/usr/bin/git", ["init", "-q", "-b", "main", dir])
        for round in 0..<3 {
            for i in 0..<8 {
                let folder = "\(dir)/src/m\(i % 3)"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try Data("// file \(i), round \(round)\n\(String(repeating: "x", count: 200 * i))\n".utf8)
                    .write(to: URL(fileURLWithPath: "\(folder)/f\(i).swift"))
            }
            try run("/usr/bin/git", ["-C", dir, "add", "-A"])
            try run("/usr/bin/git", ["-C", dir, "commit", "-q", "-m", "round \(round)"])
        }
    }

    @Test("git, tar and sqlite3 in a mount leave what they wrote, whole", arguments: targets)
    func programs(_ t: Target) throws {
        try E2EGate.requireFUSE()
        let scratch = "/tmp/favfs-programs-\(UUID().uuidString.prefix(6))"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let repo = scratch + "/repo"
        try Self.makeRepository(at: repo)
        let tree = scratch + "/tree"
        try Self.makeRepository(at: tree)  // a source tree to archive (its .git: many small files)
        // Servers whose listings leave out dot names: a new mount would not see .git.
        let archived = t.server.traits.listsDotNames ? "tree" : "tree/src"
        try Self.run("/usr/bin/tar", ["-C", scratch, "-cf", scratch + "/tree.tar", archived])
        let (m, remote, root) = try Self.mount(t, withFolder: "programs")
        defer { m.tearDown() }
        let here = m.path + "/" + root

        // git: clone, a commit, fsck.
        try Self.run(in: m, "/usr/bin/git", ["clone", "-q", repo, here + "/clone"])
        try Data("changed in the mount\n".utf8).write(to: URL(fileURLWithPath: here + "/clone/src/m0/f0.swift"))
        try Self.run(in: m, "/usr/bin/git", ["-C", here + "/clone", "commit", "-q", "-am", "edited in the mount"])
        try Self.run(in: m, "/usr/bin/git", ["-C", here + "/clone", "fsck", "--strict", "--no-progress"])
        let status = try Self.run(in: m, "/usr/bin/git", ["-C", here + "/clone", "status", "--porcelain"])
        #expect(status.isEmpty, "\(t.server.name): git status after the commit: \(status)")

        // tar x: the tree, times included.
        try Self.run(in: m, "/usr/bin/tar", ["-C", here, "-xf", scratch + "/tree.tar"])

        // sqlite3: 20 transactions.
        var script = "CREATE TABLE t(a INTEGER, b TEXT);\n"
        for tx in 0..<20 {
            script += "BEGIN;\n" + (0..<50).map { "INSERT INTO t VALUES(\(tx * 50 + $0), 'row \(tx * 50 + $0)');\n" }.joined() + "COMMIT;\n"
        }
        try Self.run(in: m, "/usr/bin/sqlite3", [here + "/db.sqlite"], stdin: script)
        #expect(try m.unmount().succeeded, "\(t.server.name): unmount: \(m.logProblems())")

        // Another computer.
        let other = try MountedFavFS(remote: remote.urlWithOptions)
        defer { other.tearDown() }
        try other.mountOrThrow(password: remote.secret)
        let there = other.path + "/" + root
        let diff = try Shell.run("/usr/bin/diff", ["-r", t.server.traits.listsDotNames ? tree : tree + "/src",
                                                   there + (t.server.traits.listsDotNames ? "/tree" : "/tree/src")])
        #expect(diff.status == 0, "\(t.server.name): the extracted tree differs: \(diff.output.prefix(400))")
        let check = try Self.run(in: other, "/usr/bin/sqlite3", [there + "/db.sqlite", "PRAGMA integrity_check; SELECT count(*) FROM t;"])
        #expect(check == "ok\n1000\n", "\(t.server.name): sqlite3: \(check)")
        // Where listings leave .git out (nginx), git still finds it: it asks for it by name.
        do {
            try Self.run("/usr/bin/git", ["-C", there + "/clone", "fsck", "--strict", "--no-progress"])
        } catch {
            let listing = (try? FileManager.default.contentsOfDirectory(atPath: there + "/clone/.git"))?.sorted() ?? []
            Issue.record("\(t.server.name): from a new cache dir: \(error); .git holds \(listing) — \(other.logProblems())")
            return
        }
        let log = try Self.run("/usr/bin/git", ["-C", there + "/clone", "log", "--format=%s"])
        #expect(log.split(separator: "\n") == ["edited in the mount", "round 2", "round 1", "round 0"], "\(t.server.name): git log: \(log)")
        #expect(try other.unmount().succeeded)
    }

    /// sqlite3 pausing inside its transactions, longer than the quiet time after which a synced
    /// file is uploaded: its database goes up mid-transaction, with its hot journal beside it,
    /// and the journal is deleted at each commit. When it ends, the server must hold the last
    /// committed database and no journal (a journal left behind is "hot": the next reader rolls
    /// the database back with it).
    @Test("sqlite3 pausing mid-transaction leaves the server its last commit and no journal", arguments: targets)
    func sqliteUploadedMidTransaction(_ t: Target) throws {
        try E2EGate.requireFUSE()
        let (m, remote, root) = try Self.mount(t, withFolder: "slowdb")
        defer { m.tearDown() }
        let here = m.path + "/" + root
        var script = "CREATE TABLE t(a INTEGER, b TEXT);\n"
        for tx in 0..<4 {
            script += "BEGIN;\n"
            for row in 0..<200 {
                script += "INSERT INTO t VALUES(\(tx * 200 + row), '\(String(repeating: "r", count: 100 + row))');\n"
                // A pause once the transaction has spilled pages into the database file: the
                // quiet time after the last commit's fsync ends within it.
                if row == 150 { script += ".shell sleep 1.6\n" }
            }
            script += "COMMIT;\n"
        }
        try Self.run(in: m, "/usr/bin/sqlite3", ["-cmd", "PRAGMA cache_size=2", here + "/db.sqlite"], stdin: script)
        #expect(try m.unmount().succeeded, "\(t.server.name): unmount: \(m.logProblems())")

        let other = try MountedFavFS(remote: remote.urlWithOptions)
        defer { other.tearDown() }
        try other.mountOrThrow(password: remote.secret)
        let there = other.path + "/" + root
        let names = try FileManager.default.contentsOfDirectory(atPath: there).sorted()
        #expect(names == ["db.sqlite"], "\(t.server.name): the server holds \(names)")
        let check = try Self.run(in: other, "/usr/bin/sqlite3", ["-readonly", there + "/db.sqlite", "PRAGMA integrity_check; SELECT count(*) FROM t;"])
        #expect(check == "ok\n800\n", "\(t.server.name): sqlite3: \(check)")
        #expect(try other.unmount().succeeded)
    }
}
