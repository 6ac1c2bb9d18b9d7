import Foundation

/// Apache mod_dav with Basic auth, serving a temp folder.
public final class WebDAVConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = WebDAVConformanceServer()
    public let name = "webdav"
    static let user = "favfs", password = "conformance-secret"
    private let instance: SharedServer<ApacheServer>

    public var traits: ConformanceTraits { ConformanceTraits() }

    private init() {
        instance = SharedServer(make: {
            let s = try ApacheServer(auth: .basic(user: Self.user, password: Self.password))
            try s.start()
            return s
        }, stop: { $0.remove() })
    }

    private func running() throws -> ApacheServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    public func remote() -> ConformanceRemote {
        let s = try! running()
        return ConformanceRemote(url: "dav://\(Self.user)@127.0.0.1:\(s.port)/files/", secret: Self.password)
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        var r = remote(); r.secret = "wrong"; return r
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        ConformanceRemote(url: "dav://\(Self.user)@127.0.0.1:\(try FreePort.next())/files/", secret: Self.password)
    }

    public func servedFolder() throws -> URL { try running().documentRoot }
    public func servedFolderChanged() throws { try running().fixOwnership() }
}
