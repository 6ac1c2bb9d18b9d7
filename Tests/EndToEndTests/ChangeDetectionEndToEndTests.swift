import Foundation
import Testing
import TestSupport

/// Changes made on the server under a running mount arrive by themselves, on every remote: a
/// new file, a deleted file and folder, a file rewritten at the same size. The mount runs with
/// a 1 s poll and caches names and attributes for a minute in the kernel and listings for an
/// hour in favfs, so only the poller and the kernel notifications can make them visible in
/// time. Watchers (inotify) of the deleted file and folder must hear of their deletion.
@Suite(.serialized)
struct ChangeDetectionEndToEndTests {
    struct Target: Sendable, CustomStringConvertible {
        let server: any ConformanceServer
        var description: String { server.name }
    }
    static let targets = ConformanceServers.all.map(Target.init)

    @Test("changes on the server reach a running mount and inotify within the poll interval", arguments: targets)
    func changesArrive(_ t: Target) throws {
        try E2EGate.requireFUSE()
        let s = t.server
        let root = "live-\(UUID().uuidString.prefix(6).lowercased())"
        let (a, b, c) = (s.fileName("a"), s.fileName("b"), s.fileName("c"))
        // Favart's versions are sizes: its rewrite must change the size.
        let rewritten = Data((s.name == "favart" ? "A, rewritten and longer\n" : "A but other\n").utf8)
        try s.start()
        try s.seed(files: ["\(root)/\(a)": Data("A original\n".utf8), "\(root)/\(b)": Data("B\n".utf8),
                           "\(root)/gone/\(s.fileName("x"))": Data("x\n".utf8)], folders: ["\(root)/gone"])
        let remote = s.remote()
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--poll-interval", "1", "--dir-cache-time", "3600", "--attr-timeout", "60"],
                           password: remote.secret)
        let dir = m.path + "/" + root
        let fm = FileManager.default
        #expect(Set(try fm.contentsOfDirectory(atPath: dir)) == [a, b, "gone"])
        #expect(fm.contents(atPath: dir + "/" + a) == Data("A original\n".utf8))
        _ = try fm.contentsOfDirectory(atPath: dir + "/gone")
        let before = try TimedProcess.sh("stat -c %Y \(shq(dir + "/" + a)); stat \(shq(dir + "/" + b)) >/dev/null; stat \(shq(dir + "/" + c))", timeout: 30)
        #expect(!before.succeeded, "\(c) exists before it was made: \(before)")   // now a cached negative entry

        // What a watcher of the deleted items sees (Linux tells watchers of a file or folder
        // deleted by `notify_delete`, IN_DELETE_SELF), and what a watcher of the folder sees,
        // as a file manager watches it (the mount's echo of each change: IN_CREATE, IN_DELETE,
        // IN_ATTRIB).
        let watchers = try [b, "gone", ""].map { name in
            try BackgroundProcess("/usr/bin/python3", [Self.fixture("inotify_watch.py"), dir + "/" + name],
                                  logFile: FileManager.default.temporaryDirectory.appendingPathComponent("inotify-\(root)-\(name).log"))
        }
        defer { watchers.forEach { $0.stop() } }
        #expect(waitUntil(10) { watchers.allSatisfy { $0.log().hasPrefix("ready") } }, "the watchers did not start: \(watchers.map { $0.log() })")
        let folderWatcher = watchers[2]

        try s.seed(files: ["\(root)/\(c)": Data("C\n".utf8)], folders: [])
        try s.remove("\(root)/\(b)")
        try s.remove("\(root)/gone")
        try s.overwrite("\(root)/\(a)", with: rewritten)

        let arrived = waitUntil(30) {
            (try? fm.contentsOfDirectory(atPath: dir)).map(Set.init) == [a, c]
                && fm.fileExists(atPath: dir + "/" + c) && !fm.fileExists(atPath: dir + "/" + b)
                && !fm.fileExists(atPath: dir + "/gone")
                && fm.contents(atPath: dir + "/" + a) == rewritten
        }
        #expect(arrived, "the server's changes did not reach the mount within 30 s (poll interval 1 s): \(m.logTail())")
        let told = waitUntil(10) { watchers[0...1].allSatisfy { $0.log().contains("DELETE_SELF") } }
        #expect(told, "a watcher of a deleted item was not told (IN_DELETE_SELF): \(watchers.map { $0.log() })")
        // A read-only mount has no echo (the kernel refuses it with EROFS before asking favfs).
        if s.traits.writable {
            let expected = ["CREATE \(c)", "DELETE \(b)", "DELETE,ISDIR gone", "ATTRIB \(a)"]
            let heard = waitUntil(10) { expected.allSatisfy(folderWatcher.log().components(separatedBy: "\n").contains) }
            #expect(heard, "a watcher of the folder did not hear \(expected): \(folderWatcher.log()) — \(m.logTail())")
            // The echo changed nothing at the server: the new file is there as made, the deleted ones stay gone.
            #expect(try s.contents(of: "\(root)/\(c)") == Data("C\n".utf8))
            #expect(try !s.exists("\(root)/\(b)") && !s.exists("\(root)/gone"))
            #expect(try s.contents(of: "\(root)/\(a)") == rewritten)
        }
        if s.traits.writable {
            // The folder is gone here too: making it again is not EEXIST.
            #expect(throws: Never.self) { try fm.createDirectory(atPath: dir + "/gone", withIntermediateDirectories: false) }
        }
        let unmounted = try m.unmount()
        #expect(unmounted.succeeded, "favfs unmount: \(unmounted) — \(m.logProblems())")
    }

    /// The local provider watches the folders in use with inotify: changes arrive at once, with
    /// an hour between polls.
    @Test("local: changes arrive through inotify without waiting for the poller")
    func localChangesArriveAtOnce() throws {
        try E2EGate.requireFUSE()
        let s = LocalConformanceServer.shared
        let root = "watched-\(UUID().uuidString.prefix(6).lowercased())"
        try s.start()
        try s.seed(files: ["\(root)/a.txt": Data("a\n".utf8)], folders: [])
        let m = try MountedFavFS(remote: s.remote().urlWithOptions)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--poll-interval", "3600", "--dir-cache-time", "3600", "--attr-timeout", "60"])
        let fm = FileManager.default, dir = m.path + "/" + root
        #expect(try fm.contentsOfDirectory(atPath: dir) == ["a.txt"])
        #expect(!fm.fileExists(atPath: dir + "/new.txt"))
        try s.seed(files: ["\(root)/new.txt": Data("new\n".utf8)], folders: [])
        try s.remove("\(root)/a.txt")
        #expect(waitUntil(10) { (try? fm.contentsOfDirectory(atPath: dir)) == ["new.txt"] && !fm.fileExists(atPath: dir + "/a.txt") },
                "not seen within 10 s: \((try? fm.contentsOfDirectory(atPath: dir)) ?? [])")
        #expect(fm.contents(atPath: dir + "/new.txt") == Data("new\n".utf8))
        let unmounted = try m.unmount()
        #expect(unmounted.succeeded, "favfs unmount: \(unmounted) — \(m.logProblems())")
    }

    /// Placeholders from an earlier mount are not trusted to say what exists: a folder deleted
    /// on the server between two mounts can be made again at once, and a file added meanwhile
    /// is found by name, with no poller and listings that would otherwise be fresh for an hour.
    @Test("after a remount, placeholders are revalidated before they are trusted")
    func remountRevalidates() throws {
        try E2EGate.requireFUSE()
        let s = ApacheConformanceServer.webdav
        let root = "again-\(UUID().uuidString.prefix(6).lowercased())"
        try s.start()
        try s.seed(files: ["\(root)/sub/f.txt": Data("f\n".utf8), "\(root)/kept.txt": Data("k\n".utf8)], folders: [])
        let remote = s.remote()
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        let args = ["--poll-interval", "0", "--dir-cache-time", "3600"]
        try m.mountOrThrow(extraArgs: args, password: remote.secret)
        let fm = FileManager.default
        let dir = m.path + "/" + root
        #expect(Set(try fm.contentsOfDirectory(atPath: dir)) == ["sub", "kept.txt"])
        #expect(try fm.contentsOfDirectory(atPath: dir + "/sub") == ["f.txt"])
        let unmounted = try m.unmount()
        #expect(unmounted.succeeded, "favfs unmount: \(unmounted) — \(m.logProblems())")

        try s.remove("\(root)/sub")
        try s.seed(files: ["\(root)/new.txt": Data("n\n".utf8)], folders: [])
        try m.mountOrThrow(extraArgs: args, password: remote.secret)
        #expect(fm.contents(atPath: dir + "/new.txt") == Data("n\n".utf8), "a file added between mounts is not found: \(m.logTail())")
        #expect(throws: Never.self) { try fm.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: false) }
        #expect(Set(try fm.contentsOfDirectory(atPath: dir)) == ["sub", "kept.txt", "new.txt"])
        #expect(try fm.contentsOfDirectory(atPath: dir + "/sub") == [])
        let again = try m.unmount()
        #expect(again.succeeded, "favfs unmount: \(again) — \(m.logProblems())")
        #expect(try s.exists("\(root)/sub"))
    }

    /// What the poller costs: requests a WebDAV server gets in one minute from a mount with 10
    /// folders in use and the default interval, and nothing else happening. A measurement
    /// (a minute long): FAVFS_MEASURE=1 runs it.
    @Test("poll cost with 10 folders in use", .enabled(if: ProcessInfo.processInfo.environment["FAVFS_MEASURE"] == "1"))
    func pollCost() throws {
        try E2EGate.requireFUSE()
        let apache = try ApacheServer()
        var files: [String: Data] = [:]
        for f in 0..<10 { for i in 0..<20 { files["f\(f)/file\(i).txt"] = Data("\(f) \(i)\n".utf8) } }
        try apache.write(files)
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow()
        for f in 0..<10 { _ = try FileManager.default.contentsOfDirectory(atPath: m.path + "/f\(f)") }
        let before = apache.accessLogLines().count
        sleep(60)
        let lines = apache.accessLogLines().dropFirst(before)
        let propfinds = lines.filter { $0.hasPrefix("PROPFIND") }.count
        print("poll cost: \(lines.count) requests (\(propfinds) PROPFIND) in 60 s for 10 folders in use (+ the root)")
        #expect(lines.count > 0, "the poller sent nothing")
        let unmounted = try m.unmount()
        #expect(unmounted.succeeded, "favfs unmount: \(unmounted) — \(m.logProblems())")
    }

    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/\(name)").path
    }
}
