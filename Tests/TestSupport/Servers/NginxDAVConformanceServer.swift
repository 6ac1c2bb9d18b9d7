import Foundation

/// nginx's WebDAV (core dav module + dav-ext, Debian's packages) behind Basic auth: a second
/// WebDAV implementation beside Apache, with none of Apache's help for safe writes — its
/// PROPFIND has no ETags, it has no locks and it ignores If-Match and If-None-Match.
public final class NginxDAVConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = NginxDAVConformanceServer()
    public let name = "webdav-nginx"
    static let user = "favfs", password = "nginx-secret"
    private let instance: SharedServer<NginxServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.conditionalWritesAreAtomic = false
        t.listsDotNames = false
        return t
    }

    private init() {
        instance = SharedServer(make: {
            guard NginxServer.hasWebDAV else {
                throw ShellError("nginx's WebDAV needs nginx and libnginx-mod-http-dav-ext (make setup)")
            }
            let s = try NginxServer(webdav: (Self.user, Self.password))
            try s.start()
            return s
        }, isAlive: { $0.isRunning }, stop: { $0.remove() })
    }

    private func running() throws -> NginxServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    private func remote(port: Int) -> ConformanceRemote {
        ConformanceRemote(url: "dav://\(Self.user)@127.0.0.1:\(port)/files/", secret: Self.password)
    }
    public func remote() -> ConformanceRemote { remote(port: try! running().port) }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        var r = remote(); r.secret = "wrong"; return r
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? { remote(port: try FreePort.next()) }

    public func servedFolder() throws -> URL { try running().documentRoot }
    public func servedFolderChanged() throws { try running().fixOwnership() }
}
