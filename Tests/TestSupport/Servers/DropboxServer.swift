import Foundation
import XCTest

/// The Dropbox API fixture (`Tests/Fixtures/dropbox_api_server.py`, Python 3 stdlib) serving a
/// temp folder on a free loopback port, in the foreground of a `BackgroundProcess`: stopped by
/// `stop()`, on deinit and at the test process's exit. The remote is `dropbox:///` with the
/// fixture as `endpoint`; the refresh token it accepts is `refreshToken`.
public final class DropboxServer: @unchecked Sendable {
    /// How the fixture behaves (its command line).
    public struct Settings: Sendable {
        /// Seconds an access token is accepted.
        public var tokenLifetime: Double = 14_400
        /// The `expires_in` the token answer states (nil: the true lifetime). A longer one makes
        /// tokens run out before the client expects: the 401 `expired_access_token` path.
        public var statedLifetime: Double?
        /// The next this many API requests are answered 429 with `Retry-After: retryAfter`.
        public var throttle = 0
        public var retryAfter = 1
        /// Entries per listing page when a request gives no limit.
        public var pageSize = 500
        /// The authorization page denies access (a redirect with `error=access_denied`).
        public var denyAuthorization = false
        /// The `backoff` every long-poll answer asks for (0: none).
        public var longPollBackoff = 0
        /// The first this many long polls are answered 429 with `Retry-After: retryAfter`.
        public var longPollThrottle = 0
        /// Every long poll answers `reset`.
        public var alwaysReset = false
        public init() {}
    }

    /// The served folder (the Dropbox's root).
    public let root: URL
    public let port: Int
    public let settings: Settings
    /// The refresh token the fixture accepts, and the app key it expects.
    public let refreshToken = "fixture-refresh-token-\(UUID().uuidString.prefix(8))"
    public let clientID = "fixture-app-key"
    private let lock = NSLock()
    private var process: BackgroundProcess?

    public static let script: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/dropbox_api_server.py").path

    public static let python: String? = TestPython.path

    /// A server for a new temp folder; `start()` runs it.
    public init(settings: Settings = Settings()) throws {
        self.settings = settings
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-dropbox-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        port = try FreePort.next()
    }

    /// A started server, or a skip when there is no python3 — a failure under `CI=true`.
    public static func started(_ settings: Settings = Settings(), file: StaticString = #filePath, line: UInt = #line) throws -> DropboxServer {
        guard python != nil else {
            if TestEnvironment.isCI {
                XCTFail("\(TestPython.description) and CI=true", file: file, line: line)
                throw ShellError("python3 missing under CI")
            }
            throw XCTSkip(TestPython.description)
        }
        let server = try DropboxServer(settings: settings)
        try server.start()
        return server
    }

    /// `http://127.0.0.1:PORT`: the `endpoint` option.
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Starts the server (idempotent) and waits until it accepts connections.
    public func start() throws {
        lock.lock(); defer { lock.unlock() }
        if let process, process.isRunning { return }
        guard let python = Self.python else { throw ShellError(TestPython.description) }
        let logFile = root.deletingLastPathComponent().appendingPathComponent(root.lastPathComponent + ".log")
        var args = ["-u", Self.script, root.path, "--port", String(port), "--refresh-token", refreshToken, "--client-id", clientID,
                    "--token-lifetime", String(settings.tokenLifetime), "--throttle", String(settings.throttle),
                    "--retry-after", String(settings.retryAfter), "--page-size", String(settings.pageSize)]
        if let stated = settings.statedLifetime { args += ["--stated-lifetime", String(stated)] }
        if settings.denyAuthorization { args.append("--deny-authorization") }
        if settings.longPollBackoff > 0 { args += ["--longpoll-backoff", String(settings.longPollBackoff)] }
        if settings.longPollThrottle > 0 { args += ["--longpoll-throttle", String(settings.longPollThrottle)] }
        if settings.alwaysReset { args.append("--always-reset") }
        let p = try BackgroundProcess(python, args, logFile: logFile)
        let deadline = Date().addingTimeInterval(20)
        while !PortProbe.accepts(port) {
            guard p.isRunning else { throw ShellError("the Dropbox fixture exited: \(p.log())") }
            guard Date() < deadline else { p.stop(); throw ShellError("the Dropbox fixture did not listen on \(port): \(p.log())") }
            usleep(50_000)
        }
        process = p
    }

    public func stop() {
        lock.lock(); defer { lock.unlock() }
        process?.stop()
        process = nil
    }

    /// Stops the server and deletes the folder.
    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// Makes every change cursor given so far invalid: long polls and `continue` on them answer `reset`.
    public func resetCursors() throws {
        let r = try TimedProcess.run("/usr/bin/curl", ["-sS", "-f", "-X", "POST", endpoint + "/fixture/reset-cursors"], timeout: 20)
        guard r.succeeded else { throw ShellError("POST /fixture/reset-cursors: \(r)") }
    }

    /// How many requests of the log contain `fragment` (`"list_folder/longpoll"`).
    public func requests(_ fragment: String) -> Int {
        log().components(separatedBy: "\n").filter { $0.contains(fragment) }.count
    }

    /// The server's log: one line per request (`"POST /2/files/upload HTTP/1.1" 200 -`).
    public func log() -> String { lock.withLock { process?.log() } ?? "" }

    deinit { process?.stop(grace: 1) }
}

/// Whether something accepts TCP connections on a loopback port.
enum PortProbe {
    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
