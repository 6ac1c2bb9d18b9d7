import Foundation

/// Apache mod_dav with Basic auth, serving a temp folder.
public final class WebDAVConformanceServer: ConformanceServer, @unchecked Sendable {
    public static let shared = WebDAVConformanceServer()
    public let name = "webdav"
    static let user = "favfs", password = "conformance-secret"
    private let lock = NSLock()
    private var server: ApacheServer?

    public var traits: ConformanceTraits { ConformanceTraits() }

    private init() {}

    private func running() throws -> ApacheServer {
        lock.lock(); defer { lock.unlock() }
        if let server { return server }
        let s = try ApacheServer(auth: .basic(user: Self.user, password: Self.password))
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
        return ConformanceRemote(url: "dav://\(Self.user)@127.0.0.1:\(s.port)/files/", secret: Self.password)
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        var r = remote(); r.secret = "wrong"; return r
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        ConformanceRemote(url: "dav://\(Self.user)@127.0.0.1:\(try FreePort.next())/files/", secret: Self.password)
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
