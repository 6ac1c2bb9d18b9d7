import Foundation

/// Apache with Basic auth serving a temp folder: mod_dav for `dav://` ("webdav"), or
/// mod_autoindex (FancyIndexing, no DAV, read-only) for the `http://` index provider
/// ("httpindex", whose sizes, mtimes and versions come from HEADs).
public final class ApacheConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let webdav = ApacheConformanceServer(name: "webdav", scheme: "dav", mode: .webdav)
    public static let httpIndex = ApacheConformanceServer(name: "httpindex", scheme: "http", mode: .autoindex(fancy: true))

    public let name: String
    private let scheme: String
    private let mode: ApacheServer.Mode
    static let user = "favfs", password = "conformance-secret"
    private let instance: SharedServer<ApacheServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        if case .autoindex = mode {
            t.writable = false
            t.detectsConflicts = false
        } else {
            t.keepsModified = true  // a dead property (PROPPATCH), which mod_dav_fs stores
        }
        return t
    }

    private init(name: String, scheme: String, mode: ApacheServer.Mode) {
        self.name = name
        self.scheme = scheme
        self.mode = mode
        instance = SharedServer(make: {
            let s = try ApacheServer(auth: .basic(user: Self.user, password: Self.password), mode: mode)
            try s.start()
            return s
        }, stop: { $0.remove() })
    }

    private func running() throws -> ApacheServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    private func remote(port: Int) -> ConformanceRemote {
        ConformanceRemote(url: "\(scheme)://\(Self.user)@127.0.0.1:\(port)/files/", secret: Self.password)
    }
    public func remote() -> ConformanceRemote { remote(port: try! running().port) }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        var r = remote(); r.secret = "wrong"; return r
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? { remote(port: try FreePort.next()) }

    public func servedFolder() throws -> URL { try running().documentRoot }
    public func servedFolderChanged() throws { try running().fixOwnership() }
}
