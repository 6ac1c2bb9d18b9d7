import Foundation

/// WsgiDAV (PyPI, in the tests' virtual environment) serving a temp folder at `/files` on a
/// loopback port, in its default configuration but for Basic auth with one user: a third
/// WebDAV implementation beside Apache and nginx, written in Python, with its own ETags
/// (`mtime-size-inode`), locks, and If-Match handling.
public final class WsgiDAVServer: @unchecked Sendable {
    public static let user = "favfs", password = "wsgidav-secret"
    /// The tests' Python when it has wsgidav and cheroot (`make setup`), or nil.
    public static let python: String? = TestPython.canImport(["wsgidav", "cheroot"]) ? TestPython.path : nil
    public static var missing: String { "wsgidav or cheroot is missing in \(TestPython.description); run make setup" }

    public let root: URL
    /// What `/files` serves.
    public let documentRoot: URL
    public let port: Int
    private var process: BackgroundProcess?

    public init() throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-wsgidav-\(UUID().uuidString.prefix(8))")
        documentRoot = root.appendingPathComponent("files")
        port = try FreePort.next()
        try FileManager.default.createDirectory(at: documentRoot, withIntermediateDirectories: true)
        // YAML is a superset of JSON: the configuration written as JSON.
        let config: [String: Any] = [
            "host": "127.0.0.1", "port": port,
            "provider_mapping": ["/files": documentRoot.path],
            "http_authenticator": ["accept_basic": true, "accept_digest": false, "default_to_digest": false],
            "simple_dc": ["user_mapping": ["*": [Self.user: ["password": Self.password]]]],
            "verbose": 3,
            "logging": ["enable": true, "enable_loggers": []],
        ]
        let data = try JSONSerialization.data(withJSONObject: config, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: root.appendingPathComponent("wsgidav.yaml"))
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    public func start() throws {
        guard !isRunning else { return }
        guard let python = Self.python else { throw ShellError(Self.missing) }
        let p = try BackgroundProcess(python, ["-u", "-m", "wsgidav.server.server_cli", "--config", root.appendingPathComponent("wsgidav.yaml").path],
                                      logFile: root.appendingPathComponent("server.log"))
        process = p
        guard FreePort.waitUntilListening(port: port, timeout: 20), p.isRunning else {
            p.stop()
            throw ShellError("wsgidav did not start on \(port): \(p.log())")
        }
    }

    public func stop() {
        process?.stop()
        process = nil
    }

    /// The server's log (a line per request at this verbosity).
    public func log() -> String { process?.log() ?? "" }

    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    deinit { process?.stop(grace: 1) }
}

/// WsgiDAV as a conformance server ("webdav-wsgidav").
public final class WsgiDAVConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = WsgiDAVConformanceServer()
    public let name = "webdav-wsgidav"
    private let instance: SharedServer<WsgiDAVServer>

    public var traits: ConformanceTraits { ConformanceTraits() }

    private init() {
        instance = SharedServer(make: {
            let s = try WsgiDAVServer()
            try s.start()
            return s
        }, isAlive: { $0.isRunning }, stop: { $0.remove() })
    }

    private func running() throws -> WsgiDAVServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    private func remote(port: Int) -> ConformanceRemote {
        ConformanceRemote(url: "dav://\(WsgiDAVServer.user)@127.0.0.1:\(port)/files/", secret: WsgiDAVServer.password)
    }
    public func remote() -> ConformanceRemote { remote(port: try! running().port) }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        var r = remote(); r.secret = "wrong"; return r
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? { remote(port: try FreePort.next()) }

    public func servedFolder() throws -> URL { try running().documentRoot }
}
