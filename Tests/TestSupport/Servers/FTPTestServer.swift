import Foundation
import XCTest

/// pyftpdlib (Tests/Fixtures/ftp_server.py) serving a temp folder on 127.0.0.1, in the
/// foreground under `BackgroundProcess`, with its own passive ports on loopback. Optionally
/// explicit FTPS with a self-signed certificate made here with openssl, or without MLSD/MLST
/// (so clients must parse LIST) or MFMT.
public final class FTPTestServer: @unchecked Sendable {
    public struct Flavor: Sendable {
        public var tls = false
        public var machineListings = true
        public var setModified = true
        public var anonymous = false
        public init(tls: Bool = false, machineListings: Bool = true, setModified: Bool = true, anonymous: Bool = false) {
            self.tls = tls; self.machineListings = machineListings; self.setModified = setModified; self.anonymous = anonymous
        }
    }

    public static let user = "favfs"
    public static let password = "ftp-secret"

    public let flavor: Flavor
    public let port: Int
    /// The server's root ("/" on the server).
    public let root: URL
    /// The folder the test remotes use: `/files` on the server.
    public let documentRoot: URL
    /// The self-signed certificate (FTPS): also the CA file that trusts it.
    public let certificate: URL
    private let key: URL
    private var process: BackgroundProcess?

    public init(_ flavor: Flavor = Flavor()) throws {
        self.flavor = flavor
        port = try FreePort.next()
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-ftp-\(UUID().uuidString.prefix(8))")
        documentRoot = root.appendingPathComponent("files")
        certificate = root.appendingPathComponent("tls/cert.pem")
        key = root.appendingPathComponent("tls/key.pem")
        try FileManager.default.createDirectory(at: documentRoot, withIntermediateDirectories: true)
    }

    /// The fixture script, found from this source file (Tests/TestSupport/Servers → Tests/Fixtures).
    public static var script: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ftp_server.py")
    }

    /// The tests' Python (`TestPython`) when it has pyftpdlib and pyOpenSSL (`make setup`), or nil.
    public static let python: String? = TestPython.canImport(["pyftpdlib", "OpenSSL"]) ? TestPython.path : nil

    static var missing: String { "pyftpdlib or pyOpenSSL is missing in \(TestPython.description); run make setup" }

    /// A started server, or a skip (a failure under CI=true) when pyftpdlib is missing.
    public static func started(_ flavor: Flavor = Flavor(), file: StaticString = #filePath, line: UInt = #line) throws -> FTPTestServer {
        try requireAvailable(file: file, line: line)
        let server = try FTPTestServer(flavor)
        try server.start()
        return server
    }

    public static func requireAvailable(file: StaticString = #filePath, line: UInt = #line) throws {
        guard python != nil else {
            let what = missing
            if TestEnvironment.isCI {
                XCTFail("\(what) and CI=true", file: file, line: line)
                throw ShellError("pyftpdlib missing under CI")
            }
            throw XCTSkip(what)
        }
    }

    /// Starts the server (making the certificate first for FTPS) and waits until it listens.
    public func start() throws {
        guard process == nil else { return }
        guard let python = Self.python else { throw ShellError(Self.missing) }
        var args = [Self.script.path, root.path, String(port), Self.user, Self.password]
        if flavor.tls {
            try makeCertificate()
            args += ["--tls", certificate.path, key.path]
        }
        if !flavor.machineListings { args.append("--no-mlsd") }
        if !flavor.setModified { args.append("--no-mfmt") }
        if flavor.anonymous { args.append("--anonymous") }
        var passive: [Int] = []
        for _ in 0..<12 { passive.append(try FreePort.next()) }
        args += ["--passive-ports", passive.map(String.init).joined(separator: ",")]
        let p = try BackgroundProcess(python, ["-u"] + args, logFile: root.appendingPathComponent("server.log"))
        guard FreePort.waitUntilListening(port: port, timeout: 15), p.isRunning else {
            p.stop()
            throw ShellError("pyftpdlib did not start on \(port): \(p.log())")
        }
        process = p
    }

    /// A self-signed certificate for 127.0.0.1 (CA:TRUE, so it can be its own trust anchor).
    private func makeCertificate() throws {
        try FileManager.default.createDirectory(at: certificate.deletingLastPathComponent(), withIntermediateDirectories: true)
        let r = try Shell.run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-addext", "basicConstraints=critical,CA:TRUE",
            "-keyout", key.path, "-out", certificate.path,
        ])
        guard r.status == 0 else { throw ShellError("openssl req failed: \(r.error)") }
    }

    public func stop() {
        process?.stop()
        process = nil
    }

    /// Stops the server and deletes its folder.
    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    /// The remote URL (`ftp://favfs@127.0.0.1:PORT/files/` or `ftps://…`).
    public func url(user: String? = FTPTestServer.user, path: String = "/files/") -> String {
        "\(flavor.tls ? "ftps" : "ftp")://\(user.map { $0 + "@" } ?? "")127.0.0.1:\(port)\(path)"
    }

    public func log() -> String { process?.log() ?? "" }

    deinit { process?.stop(grace: 1) }
}
