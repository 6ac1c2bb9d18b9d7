import Foundation

/// Apache mod_autoindex (FancyIndexing, HTMLTable, no DAV) with Basic auth, serving a temp folder
/// read-only: the `http://` provider's server. Sizes, mtimes and versions come from HEADs.
public final class HTTPIndexConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = HTTPIndexConformanceServer()
    public let name = "httpindex"
    static let user = "favfs", password = "index-secret"
    private let instance: SharedServer<ApacheServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.writable = false
        t.detectsConflicts = false
        t.modifiedPrecision = 1
        return t
    }

    private init() {
        instance = SharedServer(make: {
            let s = try ApacheServer(auth: .basic(user: Self.user, password: Self.password), mode: .autoindex(fancy: true))
            try s.start()
            return s
        }, stop: { $0.remove() })
    }

    private func running() throws -> ApacheServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    public func remote() -> ConformanceRemote {
        let s = try! running()
        return ConformanceRemote(url: "http://\(Self.user)@127.0.0.1:\(s.port)/files/", secret: Self.password)
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        var r = remote(); r.secret = "wrong"; return r
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        ConformanceRemote(url: "http://\(Self.user)@127.0.0.1:\(try FreePort.next())/files/", secret: Self.password)
    }

    public func servedFolder() throws -> URL { try running().documentRoot }
    public func servedFolderChanged() throws { try running().fixOwnership() }
}

/// nginx autoindex (exact sizes), read with `metadata=index`: sizes from the page, no HEADs,
/// mtimes to the minute, versions size + minute. No authentication.
public final class NginxIndexConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = NginxIndexConformanceServer()
    public let name = "httpindex-nginx"
    private let instance: SharedServer<NginxServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.writable = false
        t.detectsConflicts = false
        t.hasAuthentication = false
        // The page shows minutes; every mtime is floored to the minute.
        t.modifiedPrecision = 60
        return t
    }

    private init() {
        instance = SharedServer(make: {
            let s = try NginxServer()
            try s.start()
            return s
        }, stop: { $0.remove() })
    }

    private func running() throws -> NginxServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    public func remote() -> ConformanceRemote {
        let s = try! running()
        return ConformanceRemote(url: "http://127.0.0.1:\(s.port)/files/", options: ["metadata": "index"])
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? { nil }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        ConformanceRemote(url: "http://127.0.0.1:\(try FreePort.next())/files/", options: ["metadata": "index"])
    }

    public func servedFolder() throws -> URL { try running().documentRoot }
}
