import Foundation

/// OpenSSH's sshd with internal-sftp, logging in with a key made for the test, host key checked
/// against a known_hosts file written by the test.
public final class SFTPConformanceServer: ConformanceServer, @unchecked Sendable {
    public static let shared = SFTPConformanceServer()
    public let name = "sftp"
    private let lock = NSLock()
    private var server: SSHServer?

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.symlinks = true
        t.keepsModified = true
        // SFTP v3 mtimes are whole seconds; listings stat every entry, so they are exact.
        t.modifiedPrecision = 1
        return t
    }

    private init() {}

    private func running() throws -> SSHServer {
        lock.lock(); defer { lock.unlock() }
        if let server { return server }
        guard SSHServer.isAvailable else { throw ShellError("sshd is not installed (/usr/sbin/sshd; apt-get install openssh-server)") }
        let s = try SSHServer()
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
        return ConformanceRemote(url: s.url, options: ["key": s.clientKey, "known_hosts": s.knownHosts])
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        let s = try! running()
        return ConformanceRemote(url: s.url, options: ["key": s.wrongKey, "known_hosts": s.knownHosts])
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        let s = try running()
        return ConformanceRemote(url: "sftp://\(s.user)@127.0.0.1:\(try FreePort.next())\(s.files.path)",
                                 options: ["key": s.clientKey, "known_hosts": s.knownHosts])
    }

    public func seed(files: [String: Data], folders: [String]) throws {
        try DirectorySeeding.seed(try running().files, files: files, folders: folders)
    }
    public func contents(of path: String) throws -> Data? { DirectorySeeding.contents(try running().files, path) }
    public func exists(_ path: String) throws -> Bool {
        FileManager.default.fileExists(atPath: try running().files.appendingPathComponent(path).path)
    }
    public func overwrite(_ path: String, with data: Data) throws {
        try DirectorySeeding.overwrite(try running().files, path, with: data)
    }
}
