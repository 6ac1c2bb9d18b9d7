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

    private let fixture: PythonFixture
    /// The served folder (the Dropbox's root).
    public var root: URL { fixture.root }
    public var port: Int { fixture.port }
    public let settings: Settings
    /// The refresh token the fixture accepts, and the app key it expects.
    public let refreshToken = "fixture-refresh-token-\(UUID().uuidString.prefix(8))"
    public let clientID = "fixture-app-key"

    /// A server for a new temp folder; `start()` runs it.
    public init(settings: Settings = Settings()) throws {
        self.settings = settings
        fixture = try PythonFixture(name: "the Dropbox fixture", script: "dropbox_api_server.py", folder: "dropbox")
    }

    /// A started server, or a skip when there is no python3 — a failure under `CI=true`.
    public static func started(_ settings: Settings = Settings(), file: StaticString = #filePath, line: UInt = #line) throws -> DropboxServer {
        try PythonFixture.requirePython(file: file, line: line)
        let server = try DropboxServer(settings: settings)
        try server.start()
        return server
    }

    /// `http://127.0.0.1:PORT`: the `endpoint` option.
    public var endpoint: String { fixture.endpoint }

    /// Starts the server (idempotent) and waits until it accepts connections.
    public func start() throws {
        var args = ["--refresh-token", refreshToken, "--client-id", clientID,
                    "--token-lifetime", String(settings.tokenLifetime), "--throttle", String(settings.throttle),
                    "--retry-after", String(settings.retryAfter), "--page-size", String(settings.pageSize)]
        if let stated = settings.statedLifetime { args += ["--stated-lifetime", String(stated)] }
        if settings.denyAuthorization { args.append("--deny-authorization") }
        if settings.longPollBackoff > 0 { args += ["--longpoll-backoff", String(settings.longPollBackoff)] }
        if settings.longPollThrottle > 0 { args += ["--longpoll-throttle", String(settings.longPollThrottle)] }
        if settings.alwaysReset { args.append("--always-reset") }
        try fixture.start(arguments: args)
    }

    public func stop() { fixture.stop() }

    /// The server hangs (SIGSTOP) until `resume()`.
    public func pause() { fixture.pause() }
    public func resume() { fixture.resume() }

    /// Stops the server and deletes the folder.
    public func remove() { fixture.remove() }

    /// Makes every change cursor given so far invalid: long polls and `continue` on them answer `reset`.
    public func resetCursors() throws { try fixture.control("/fixture/reset-cursors") }

    /// One byte of each of the next `uploads` uploaded bodies and `downloads` download bodies
    /// is flipped, as a faulty network path would.
    public func corrupt(uploads: Int = 0, downloads: Int = 0) throws {
        try fixture.control("/fixture/corrupt?uploads=\(uploads)&downloads=\(downloads)")
    }

    /// How many requests of the log contain `fragment` (`"list_folder/longpoll"`).
    public func requests(_ fragment: String) -> Int {
        log().components(separatedBy: "\n").filter { $0.contains(fragment) }.count
    }

    /// The server's log: one line per request (`"POST /2/files/upload HTTP/1.1" 200 -`).
    public func log() -> String { fixture.log() }
}
