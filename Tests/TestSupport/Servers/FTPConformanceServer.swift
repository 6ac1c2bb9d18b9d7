import Foundation

/// pyftpdlib as the FTP conformance server: `shared` is plain FTP ("ftp"), `ftps` explicit FTP
/// over TLS with a self-signed certificate given as `ca_certificate` ("ftps"). Both have MLSD,
/// MLST and MFMT, serve `/files` and keep times in UTC with one-second precision.
public final class FTPConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = FTPConformanceServer(tls: false)
    public static let ftps = FTPConformanceServer(tls: true)

    public let name: String
    private let tls: Bool
    private let instance: SharedServer<FTPTestServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.keepsModified = true  // MFMT
        t.modifiedPrecision = 1  // MLSD modify= has whole seconds
        return t
    }

    private init(tls: Bool) {
        instance = SharedServer(make: {
            try FTPTestServer.requireAvailable()
            let s = try FTPTestServer(.init(tls: tls))
            try s.start()
            return s
        }, isAlive: { $0.isRunning }, stop: { $0.remove() })
        self.tls = tls
        name = tls ? "ftps" : "ftp"
    }

    private func running() throws -> FTPTestServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

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

    public func servedFolder() throws -> URL { try running().documentRoot }
}
