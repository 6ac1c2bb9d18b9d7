import Foundation
import Testing
import TestSupport

/// File managers watch the folder they show (GLib's directory monitor over inotify): a change
/// made at the server must reach such a watcher by itself, as `IN_CREATE`, `IN_DELETE` or
/// `IN_ATTRIB`, within the poll interval (the local remote: at once, through its own inotify).
/// favfs raises them by echoing each change on its own mount (`ChangeEcho`); the echo must never
/// reach the server, and must not keep an unmount from succeeding.
@Suite(.serialized)
struct FolderWatchEndToEndTests {
    struct Target: Sendable, CustomStringConvertible {
        let server: any ConformanceServer
        let pollInterval: String
        var description: String { server.name }
    }
    static let targets = [Target(server: LocalConformanceServer.shared, pollInterval: "3600"),
                          Target(server: ApacheConformanceServer.webdav, pollInterval: "1")]

    @Test("a watcher of a folder hears each server change; the echo changes nothing at the server", arguments: targets)
    func watcherHearsServerChanges(_ t: Target) throws {
        try E2EGate.requireFUSE()
        let s = t.server
        let root = "watch-\(UUID().uuidString.prefix(6).lowercased())"
        try s.start()
        try s.seed(files: ["\(root)/old.txt": Data("old\n".utf8), "\(root)/changed.txt": Data("v1\n".utf8),
                           "\(root)/dir/x.txt": Data("x\n".utf8)], folders: ["\(root)/dir"])
        let remote = s.remote()
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--poll-interval", t.pollInterval, "--dir-cache-time", "3600", "--attr-timeout", "60"],
                           password: remote.secret)
        let dir = m.path + "/" + root
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir)) == ["old.txt", "changed.txt", "dir"])
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("watch-\(root).log")
        let watcher = try BackgroundProcess("/usr/bin/python3", [ChangeDetectionEndToEndTests.fixture("inotify_watch.py"), "--times", dir],
                                            logFile: log)
        defer { watcher.stop() }
        // GLib's own monitor, as Thunar and Nautilus use it.
        let gio = try BackgroundProcess("/usr/bin/gio", ["monitor", dir], logFile: log.appendingPathExtension("gio"))
        defer { gio.stop() }
        #expect(waitUntil(10) { watcher.log().hasPrefix("ready") }, "the watcher did not start: \(watcher.log())")
        Thread.sleep(forTimeInterval: 0.5)   // gio prints nothing when its monitor is ready

        // One change at a time, each timed from the server's change to the event.
        let steps: [(event: String, change: () throws -> Void)] = [
            ("CREATE new.txt", { try s.seed(files: ["\(root)/new.txt": Data("new\n".utf8)], folders: []) }),
            ("DELETE old.txt", { try s.remove("\(root)/old.txt") }),
            ("ATTRIB changed.txt", { try s.overwrite("\(root)/changed.txt", with: Data("version 2, longer\n".utf8)) }),
            ("CREATE,ISDIR made", { try s.seed(files: ["\(root)/made/inside.txt": Data("i\n".utf8)], folders: ["\(root)/made"]) }),
            ("DELETE,ISDIR dir", { try s.remove("\(root)/dir") }),
        ]
        // A symbolic link made at the server (the local remote keeps them) is echoed as one.
        var allSteps = steps
        if let local = s as? LocalConformanceServer {
            allSteps.append(("CREATE link", {
                try FileManager.default.createSymbolicLink(atPath: local.root.path + "/\(root)/link", withDestinationPath: "new.txt")
            }))
        }
        var delays: [String] = []
        for step in allSteps {
            let before = Date()
            try step.change()
            var heardAt: Double?
            let heard = waitUntil(15) {
                heardAt = Self.eventTimes(watcher.log())[step.event]
                return heardAt != nil
            }
            #expect(heard, "\(step.event) was not heard within 15 s (poll \(t.pollInterval) s): \(watcher.log()) — \(m.logTail())")
            if let heardAt { delays.append("\(step.event) \(String(format: "%.2f", heardAt - before.timeIntervalSince1970)) s") }
        }
        print("\(s.name): from the server's change to the folder watcher's event: \(delays.joined(separator: ", "))")
        #expect(waitUntil(10) {
            let g = gio.log()
            return ["new.txt: created", "old.txt: deleted", "made: created", "dir: deleted"].allSatisfy { g.contains("/\(root)/\($0)") }
        }, "gio monitor (GLib, as file managers use it) did not report the changes: \(gio.log())")

        // The echo reached nothing at the server.
        #expect(try s.contents(of: "\(root)/new.txt") == Data("new\n".utf8))
        #expect(try s.contents(of: "\(root)/changed.txt") == Data("version 2, longer\n".utf8))
        #expect(try s.contents(of: "\(root)/made/inside.txt") == Data("i\n".utf8))
        #expect(try !s.exists("\(root)/old.txt") && !s.exists("\(root)/dir"))
        // And the mount shows what the server has.
        let fm = FileManager.default
        #expect(Set(try fm.contentsOfDirectory(atPath: dir)) == Set(["new.txt", "changed.txt", "made"] + (s is LocalConformanceServer ? ["link"] : [])))
        if s is LocalConformanceServer {
            #expect((try? fm.destinationOfSymbolicLink(atPath: dir + "/link")) == "new.txt", "the echoed link's target")
            #expect((try? fm.destinationOfSymbolicLink(atPath: local(s) + "/\(root)/link")) == "new.txt", "the echo changed the server's link")
        }
        #expect(fm.contents(atPath: dir + "/changed.txt") == Data("version 2, longer\n".utf8))
        #expect(fm.contents(atPath: dir + "/made/inside.txt") == Data("i\n".utf8))

        // A program's own mknod is still refused; its own file is heard as usual and uploaded.
        let fifo = try TimedProcess.sh("mkfifo \(shq(dir + "/fifo"))", timeout: 30)
        #expect(!fifo.succeeded && fifo.stderr.contains("not permitted"), "mkfifo in the mount: \(fifo)")
        #expect(fm.createFile(atPath: dir + "/mine.txt", contents: Data("mine\n".utf8)))
        // (Foundation writes it under a temporary name and renames it into place.)
        #expect(waitUntil(10) { Self.eventTimes(watcher.log())["MOVED_TO mine.txt"] != nil }, "\(watcher.log())")
        let unmounted = try m.unmount()
        #expect(unmounted.succeeded, "favfs unmount: \(unmounted) — \(m.logProblems())")
        #expect(try s.contents(of: "\(root)/mine.txt") == Data("mine\n".utf8))
    }

    /// Many changes at once are each heard, and an unmount while they are being echoed
    /// succeeds: the echo stops before the kernel unmount, so none of its syscalls keeps the
    /// mount busy.
    @Test("a burst of server changes is heard whole, and an unmount in the middle of it succeeds")
    func burstThenUnmount() throws {
        try E2EGate.requireFUSE()
        let s = LocalConformanceServer.shared
        let root = "burst-\(UUID().uuidString.prefix(6).lowercased())"
        try s.start()
        try s.seed(files: ["\(root)/seed.txt": Data("s\n".utf8)], folders: [])
        let m = try MountedFavFS(remote: s.remote().urlWithOptions)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--poll-interval", "3600"])
        let dir = m.path + "/" + root
        _ = try FileManager.default.contentsOfDirectory(atPath: dir)
        let watcher = try BackgroundProcess("/usr/bin/python3", [ChangeDetectionEndToEndTests.fixture("inotify_watch.py"), dir],
                                            logFile: FileManager.default.temporaryDirectory.appendingPathComponent("burst-\(root).log"))
        defer { watcher.stop() }
        #expect(waitUntil(10) { watcher.log().hasPrefix("ready") })

        let names = (1...300).map { "f\($0).txt" }
        try s.seed(files: Dictionary(uniqueKeysWithValues: names.map { ("\(root)/\($0)", Data($0.utf8)) }), folders: [])
        let all = waitUntil(30) { Set(watcher.log().split(separator: "\n").map(String.init)).isSuperset(of: names.map { "CREATE \($0)" }) }
        #expect(all, "not every one of 300 new files was heard: \(watcher.log().split(separator: "\n").count - 1) events — \(m.logTail())")

        // Unmount while a second burst is being echoed.
        let more = (1...300).map { "g\($0).txt" }
        try s.seed(files: Dictionary(uniqueKeysWithValues: more.map { ("\(root)/\($0)", Data($0.utf8)) }), folders: [])
        #expect(waitUntil(30) { watcher.log().contains("CREATE g") })
        let unmounted = try m.unmount()
        #expect(unmounted.succeeded, "favfs unmount during an echo burst: \(unmounted) — \(m.logProblems())")
        #expect(try s.contents(of: "\(root)/g300.txt") == Data("g300.txt".utf8))
    }

    /// `TIME EVENT NAME` lines: the first time each `EVENT NAME` was heard.
    private func local(_ s: any ConformanceServer) -> String { (s as? LocalConformanceServer)?.root.path ?? "" }

    static func eventTimes(_ log: String) -> [String: Double] {
        var first: [String: Double] = [:]
        for line in log.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let t = Double(parts[0]) else { continue }
            if first[String(parts[1])] == nil { first[String(parts[1])] = t }
        }
        return first
    }
}
