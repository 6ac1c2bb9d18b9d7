import Foundation

/// A session bus of a test's own (`dbus-daemon --session` on a socket in /tmp) with, unless
/// told otherwise, the notification server of Tests/Fixtures/notification_server.py on it:
/// what favfs sends there is what a desktop would show. Both are stopped by `stop()`.
public final class PrivateSessionBus: @unchecked Sendable {
    public let directory: URL
    public let address: String
    private let listen: String
    private var daemon: BackgroundProcess
    private var server: BackgroundProcess?
    public var notificationLog: URL { directory.appendingPathComponent("notifications.jsonl") }

    /// dbus-daemon, and python3 with Gio (python3-gi) for the notification server.
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
            && ((try? TimedProcess.run("/usr/bin/python3", ["-c", "from gi.repository import Gio"], timeout: 30))?.succeeded ?? false)
    }

    /// `abstract`: listen on an abstract socket (`unix:abstract=`) instead of a path.
    public init(notificationServer: Bool = true, abstract: Bool = false) throws {
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("favfs-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        listen = abstract ? "unix:abstract=\(directory.path)/bus" : "unix:path=\(directory.path)/bus"
        (daemon, address) = try Self.startDaemon(listen: listen, log: directory.appendingPathComponent("dbus-daemon.log"))
        if notificationServer { try startNotificationServer() }
    }

    private static func startDaemon(listen: String, log: URL) throws -> (BackgroundProcess, String) {
        try? FileManager.default.removeItem(at: log)
        let daemon = try BackgroundProcess("/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address", "--address=\(listen)"],
                                           logFile: log)
        var printed = ""
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            printed = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let line = printed.split(separator: "\n").first(where: { $0.hasPrefix("unix:") }) { printed = String(line); break }
            guard daemon.isRunning else { break }
            usleep(50_000)
        }
        guard printed.hasPrefix("unix:") else {
            daemon.stop()
            throw ShellError("dbus-daemon did not print its address: \(printed)")
        }
        return (daemon, printed)
    }

    /// The bus goes away (every connection to it breaks) and a new one starts on the same
    /// socket, with a new notification server; what was received so far stays in the log.
    public func restart() throws {
        server?.stop()
        daemon.stop()
        if listen.hasPrefix("unix:path=") { try? FileManager.default.removeItem(atPath: String(listen.dropFirst(10))) }
        (daemon, _) = try Self.startDaemon(listen: listen, log: directory.appendingPathComponent("dbus-daemon.log"))
        try startNotificationServer()
    }

    public func startNotificationServer() throws {
        let script = TestPython.packageRoot.appendingPathComponent("Tests/Fixtures/notification_server.py").path
        let out = directory.appendingPathComponent("notification-server.log")
        let p = try BackgroundProcess("/usr/bin/python3", [script, address, notificationLog.path], logFile: out)
        server = p
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if p.log().contains("READY") { return }
            guard p.isRunning else { break }
            usleep(50_000)
        }
        throw ShellError("the notification server did not start: \(p.log())")
    }

    /// The Notify calls the server got so far, as it decoded them.
    public func notifications() -> [[String: Any]] {
        guard let text = try? String(contentsOf: notificationLog, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// Waits until at least `count` notifications arrived (or `timeout`), then returns them all.
    public func waitForNotifications(_ count: Int, timeout: Double = 30) -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let n = notifications()
            if n.count >= count { return n }
            usleep(100_000)
        }
        return notifications()
    }

    public func stop() {
        server?.stop()
        daemon.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}
