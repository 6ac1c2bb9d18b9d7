import Foundation
import XCTest

/// A real OpenSSH sshd serving SFTP (internal-sftp) on a free loopback port, with its own host
/// key, a client key pair made for the test, and a known_hosts file that holds the host key.
/// It runs in the foreground (`sshd -D -e`) as a `BackgroundProcess`, with TZ=UTC.
///
/// Tests run as root and log in as root with the key (`PermitRootLogin prohibit-password`).
public final class SSHServer: @unchecked Sendable {
    public let root: URL
    /// The served folder: the remote's root.
    public let files: URL
    public let port: Int
    public let user: String
    /// The client's private key (authorized), another one that is not, and the host's public key.
    public let clientKey: String
    public let wrongKey: String
    /// known_hosts with the server's host key; one with a different key for the same host; an empty one.
    public let knownHosts: String
    public let changedKnownHosts: String
    public let emptyKnownHosts: String
    private var process: BackgroundProcess?

    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd") }

    /// `extraHostKeyTypes`: more host keys beside the ed25519 one (`rsa`, `ecdsa`), as a stock
    /// sshd has, for tests of known_hosts files that list them (`keyscan`).
    public init(port: Int? = nil, extraHostKeyTypes: [String] = []) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-sshd-\(UUID().uuidString.prefix(8))")
        files = root.appendingPathComponent("files")
        self.port = try port ?? FreePort.next()
        user = String(cString: getpwuid(getuid()).pointee.pw_name)
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        let r = root.path
        clientKey = "\(r)/client_ed25519"
        wrongKey = "\(r)/wrong_ed25519"
        knownHosts = "\(r)/known_hosts"
        changedKnownHosts = "\(r)/known_hosts_changed"
        emptyKnownHosts = "\(r)/known_hosts_empty"
        for (path, comment) in [("\(r)/host_ed25519", "host"), ("\(r)/other_host_ed25519", "other"), (clientKey, "client"), (wrongKey, "wrong")] {
            let result = try Shell.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path])
            guard result.status == 0 else { throw ShellError("ssh-keygen failed: \(result.error)") }
        }
        for type in extraHostKeyTypes {
            let result = try Shell.run("/usr/bin/ssh-keygen", ["-q", "-t", type, "-N", "", "-C", "host", "-f", "\(r)/host_\(type)"])
            guard result.status == 0 else { throw ShellError("ssh-keygen -t \(type) failed: \(result.error)") }
        }
        try FileManager.default.copyItem(atPath: clientKey + ".pub", toPath: "\(r)/authorized_keys")
        func entry(_ pub: String) throws -> String {
            let parts = try String(contentsOfFile: pub, encoding: .utf8).split(separator: " ")
            return "[127.0.0.1]:\(self.port) \(parts[0]) \(parts[1])\n"
        }
        try entry("\(r)/host_ed25519.pub").write(toFile: knownHosts, atomically: true, encoding: .utf8)
        try entry("\(r)/other_host_ed25519.pub").write(toFile: changedKnownHosts, atomically: true, encoding: .utf8)
        try "".write(toFile: emptyKnownHosts, atomically: true, encoding: .utf8)
        let config = """
        Port \(self.port)
        ListenAddress 127.0.0.1
        HostKey \(r)/host_ed25519
        \(extraHostKeyTypes.map { "HostKey \(r)/host_\($0)" }.joined(separator: "\n"))
        PidFile \(r)/sshd.pid
        AuthorizedKeysFile \(r)/authorized_keys
        StrictModes no
        PermitRootLogin prohibit-password
        PasswordAuthentication no
        KbdInteractiveAuthentication no
        UsePAM no
        LogLevel ERROR
        Subsystem sftp internal-sftp

        """
        try config.write(toFile: "\(r)/sshd_config", atomically: true, encoding: .utf8)
    }

    /// The remote's URL (the served folder; paths are absolute on the server).
    public var url: String { "sftp://\(user)@127.0.0.1:\(port)\(files.path)" }

    public func start() throws {
        guard process == nil else { return }
        // sshd insists on its privilege separation folder.
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        let p = try BackgroundProcess("/usr/sbin/sshd", ["-D", "-e", "-f", root.appendingPathComponent("sshd_config").path],
                                      environment: ["TZ": "UTC"], logFile: root.appendingPathComponent("sshd.log"))
        guard FreePort.waitUntilListening(port: port, timeout: 10) else {
            p.stop()
            throw ShellError("sshd did not start on port \(port): \(p.log())")
        }
        process = p
    }

    public func stop() {
        process?.stop()
        process = nil
    }

    /// Stops the server and removes its folder.
    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    public func log() -> String { process?.log() ?? "" }

    /// A known_hosts file written by `ssh-keyscan` in its default order (ssh-rsa first when the
    /// server has an RSA key), hashed with -H when asked; returns its path.
    public func keyscan(hashed: Bool = false) throws -> String {
        let path = root.appendingPathComponent("known_hosts_keyscan\(hashed ? "_hashed" : "")").path
        let r = try Shell.run("/usr/bin/ssh-keyscan", (hashed ? ["-H"] : []) + ["-p", "\(port)", "127.0.0.1"])
        guard r.status == 0, !r.output.isEmpty else { throw ShellError("ssh-keyscan failed: \(r.error)") }
        try r.output.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

extension ServerRequirement {
    /// An sshd for a test, or a skip when OpenSSH's server is missing — a failure under CI=true.
    public static func sshd(extraHostKeyTypes: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> SSHServer {
        guard SSHServer.isAvailable else {
            if TestEnvironment.isCI {
                XCTFail("sshd is not installed (/usr/sbin/sshd, apt-get install openssh-server) and CI=true", file: file, line: line)
                throw ShellError("sshd missing under CI")
            }
            throw XCTSkip("sshd is not installed (/usr/sbin/sshd)")
        }
        return try SSHServer(extraHostKeyTypes: extraHostKeyTypes)
    }
}
