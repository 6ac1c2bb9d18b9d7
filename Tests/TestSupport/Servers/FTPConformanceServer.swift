import Foundation

/// pyftpdlib as the FTP conformance server: `shared` is plain FTP ("ftp"), `ftps` explicit FTP
/// over TLS with a self-signed certificate given as `ca_certificate` ("ftps"). Both have MLSD,
/// MLST and MFMT, serve `/files` and keep times in UTC with one-second precision.
public final class FTPConformanceServer: ConformanceServer, @unchecked Sendable {
    public static let shared = FTPConformanceServer(tls: false)
    public static let ftps = FTPConformanceServer(tls: true)

    public let name: String
    private let tls: Bool
    private let lock = NSLock()
    private var server: FTPTestServer?

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.keepsModified = true  // MFMT
        t.modifiedPrecision = 1  // MLSD modify= has whole seconds
        return t
    }

    private init(tls: Bool) {
        self.tls = tls
        name = tls ? "ftps" : "ftp"
    }

    private func running() throws -> FTPTestServer {
        lock.lock(); defer { lock.unlock() }
        if let server, server.isRunning { return server }
        try FTPTestServer.requireAvailable()
        let s = try FTPTestServer(.init(tls: tls))
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
        return ConformanceRemote(url: s.url(), options: tls ? ["ca_certificate": s.certificate.path] : [:],
                                 secret: FTPTestServer.password)
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        var r = remote(); r.secret = "wrong"; return r
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        var r = remote()
        r.url = "\(tls ? "ftps" : "ftp")://\(FTPTestServer.user)@127.0.0.1:\(try FreePort.next())/files/"
        return r
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
