import Foundation

/// OpenSSH's sshd with internal-sftp, logging in with a key made for the test, host key checked
/// against a known_hosts file written by the test.
public final class SFTPConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = SFTPConformanceServer()
    public let name = "sftp"
    private let instance: SharedServer<SSHServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.symlinks = true
        t.keepsModified = true
        // SFTP v3 mtimes are whole seconds; listings stat every entry, so they are exact.
        t.modifiedPrecision = 1
        return t
    }

    private init() {
        instance = SharedServer(make: {
            guard SSHServer.isAvailable else { throw ShellError("sshd is not installed (/usr/sbin/sshd; apt-get install openssh-server)") }
            let s = try SSHServer()
            try s.start()
            return s
        }, stop: { $0.remove() })
    }

    private func running() throws -> SSHServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

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

    public func servedFolder() throws -> URL { try running().files }
}
