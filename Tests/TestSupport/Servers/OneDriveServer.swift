import Foundation
import XCTest

/// The Microsoft Graph fixture (`Tests/Fixtures/onedrive_graph_server.py`, Python 3 stdlib)
/// serving a temp folder as the signed-in user's drive on a free loopback port, in the
/// foreground of a `BackgroundProcess`: stopped by `stop()`, on deinit and at the test
/// process's exit. The remote is `onedrive:///…` with the fixture as `endpoint`; the refresh
/// token it accepts is `refreshToken`, issued to `clientID`.
public final class OneDriveServer: @unchecked Sendable {
    /// How the fixture behaves (its command line).
    public struct Settings: Sendable {
        /// Seconds an access token is accepted.
        public var tokenLifetime: Double = 3600
        /// The `expires_in` the token answer states (nil: the true lifetime). A longer one makes
        /// tokens run out before the client expects: the 401 path.
        public var statedLifetime: Double?
        /// The next this many Graph requests are answered 429 with `Retry-After: retryAfter`.
        public var throttle = 0
        public var retryAfter = 1
        /// Entries per listing or delta page when a request gives no `$top`.
        public var pageSize = 50
        /// The consent page answers `error=access_denied` (the user said no).
        public var denyAuthorization = false
        /// A device code's polling: the `interval` the fixture asks for, how many polls answer
        /// `slow_down` and then `authorization_pending` before the outcome.
        public var deviceInterval = 1
        public var deviceSlowDown = 0
        public var devicePending = 2
        /// How a device code ends after its pending polls.
        public var deviceOutcome = DeviceOutcome.approve
        public init() {}
    }

    /// How a device code sign-in ends at the fixture.
    public enum DeviceOutcome: String, Sendable {
        /// A refresh token (the user signed in).
        case approve
        /// `authorization_declined`.
        case decline
        /// `expired_token`.
        case expire
    }

    private let fixture: PythonFixture
    /// The served folder (the drive's root).
    public var root: URL { fixture.root }
    public var port: Int { fixture.port }
    public let settings: Settings
    /// The refresh token the fixture accepts, and the client id it expects.
    public let refreshToken = "fixture-refresh-token-\(UUID().uuidString.prefix(8))"
    public let clientID = "00000000-fixture-client-id"

    /// A server for a new temp folder; `start()` runs it.
    public init(settings: Settings = Settings()) throws {
        self.settings = settings
        fixture = try PythonFixture(name: "the OneDrive fixture", script: "onedrive_graph_server.py", folder: "onedrive")
    }

    /// A started server, or a skip when there is no python3 — a failure under `CI=true`.
    public static func started(_ settings: Settings = Settings(), file: StaticString = #filePath, line: UInt = #line) throws -> OneDriveServer {
        try PythonFixture.requirePython(file: file, line: line)
        let server = try OneDriveServer(settings: settings)
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
        args += ["--device-interval", String(settings.deviceInterval), "--device-slow-down", String(settings.deviceSlowDown),
                 "--device-pending", String(settings.devicePending), "--device-outcome", settings.deviceOutcome.rawValue]
        try fixture.start(arguments: args)
    }

    public func stop() { fixture.stop() }

    /// The server hangs (SIGSTOP) until `resume()`.
    public func pause() { fixture.pause() }
    public func resume() { fixture.resume() }

    /// Stops the server and deletes the folder.
    public func remove() { fixture.remove() }

    /// The server's log: one line per request (`"PUT /upload/… HTTP/1.1" 202 -`).
    public func log() -> String { fixture.log() }

    /// The next `count` Graph requests are answered 429 with `Retry-After: retryAfter`.
    public func throttle(_ count: Int, retryAfter: Int) throws { try control("throttle?count=\(count)&retry_after=\(retryAfter)") }

    /// The next `count` upload-session fragments are answered 500 and not kept.
    public func loseFragments(_ count: Int) throws { try control("fail_fragments?count=\(count)") }

    /// Every delta token given so far answers 410 resyncRequired from now on.
    public func requireResync() throws { try control("resync") }

    /// Device codes given from now on end with `outcome` after `pending` polls.
    public func device(outcome: DeviceOutcome, pending: Int) throws { try control("device?outcome=\(outcome.rawValue)&pending=\(pending)") }

    /// Requests whose log line contains `text` (`"/common/oauth2/v2.0/token HTTP/1.1\" 200"`).
    public func requests(_ text: String) -> Int { log().components(separatedBy: "\n").filter { $0.contains(text) }.count }

    private func control(_ what: String) throws { try fixture.control("/_control/" + what) }
}
