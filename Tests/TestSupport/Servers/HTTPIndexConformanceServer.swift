import Foundation

/// Apache mod_autoindex (FancyIndexing, HTMLTable, no DAV) with Basic auth, serving a temp folder
/// read-only: the `http://` provider's server. Sizes, mtimes and versions come from HEADs.
public final class HTTPIndexConformanceServer: ConformanceServer, @unchecked Sendable {
    public static let shared = HTTPIndexConformanceServer()
    public let name = "httpindex"
    static let user = "favfs", password = "index-secret"
    private let lock = NSLock()
    private var server: ApacheServer?

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.writable = false
        t.detectsConflicts = false
        t.modifiedPrecision = 1
        return t
    }

    private init() {}

    private func running() throws -> ApacheServer {
        lock.lock(); defer { lock.unlock() }
        if let server { return server }
        let s = try ApacheServer(auth: .basic(user: Self.user, password: Self.password), mode: .autoindex(fancy: true))
        try s.start()
        server = s
        return s
    }

    public func start() throws { _ = try running() }
    public func stop() {
        lock.lock(); defer { lock.unlock() }
        server?.remove()
        server = nil
    }

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

    public func seed(files: [String: Data], folders: [String]) throws {
        let s = try running()
        try DirectorySeeding.seed(s.documentRoot, files: files, folders: folders)
        try s.fixOwnership()
    }
    public func contents(of path: String) throws -> Data? { DirectorySeeding.contents(try running().documentRoot, path) }
    public func exists(_ path: String) throws -> Bool {
        FileManager.default.fileExists(atPath: try running().documentRoot.appendingPathComponent(path).path)
    }
    public func overwrite(_ path: String, with data: Data) throws {
        let s = try running()
        try DirectorySeeding.overwrite(s.documentRoot, path, with: data)
        try s.fixOwnership()
    }
}

/// nginx autoindex (exact sizes), read with `metadata=index`: sizes from the page, no HEADs,
/// mtimes to the minute, versions size + minute. No authentication.
public final class NginxIndexConformanceServer: ConformanceServer, @unchecked Sendable {
    public static let shared = NginxIndexConformanceServer()
    public let name = "httpindex-nginx"
    private let lock = NSLock()
    private var server: NginxServer?

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.writable = false
        t.detectsConflicts = false
        t.hasAuthentication = false
        // The page shows minutes; every mtime is floored to the minute.
        t.modifiedPrecision = 60
        return t
    }

    private init() {}

    private func running() throws -> NginxServer {
        lock.lock(); defer { lock.unlock() }
        if let server { return server }
        let s = try NginxServer()
        try s.start()
        server = s
        return s
    }

    public func start() throws { _ = try running() }
    public func stop() {
        lock.lock(); defer { lock.unlock() }
        server?.remove()
        server = nil
    }

    public func remote() -> ConformanceRemote {
        let s = try! running()
        return ConformanceRemote(url: "http://127.0.0.1:\(s.port)/files/", options: ["metadata": "index"])
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? { nil }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        ConformanceRemote(url: "http://127.0.0.1:\(try FreePort.next())/files/", options: ["metadata": "index"])
    }

    public func seed(files: [String: Data], folders: [String]) throws {
        try DirectorySeeding.seed(try running().documentRoot, files: files, folders: folders)
    }
    public func contents(of path: String) throws -> Data? { DirectorySeeding.contents(try running().documentRoot, path) }
    public func exists(_ path: String) throws -> Bool {
        FileManager.default.fileExists(atPath: try running().documentRoot.appendingPathComponent(path).path)
    }
    public func overwrite(_ path: String, with data: Data) throws {
        try DirectorySeeding.overwrite(try running().documentRoot, path, with: data)
    }
}
