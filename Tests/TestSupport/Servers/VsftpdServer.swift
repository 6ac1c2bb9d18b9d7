import Foundation

/// vsftpd (Debian's package) serving a temp folder in its default configuration, but for
/// what a test needs: listening on a loopback port in the foreground, local users allowed to
/// write (`write_enable`, off in Debian's file) and chrooted to the served root. So: no
/// MLSD/MLST, LIST hides dot files, uploads get vsftpd's default umask (077). Its user is a
/// system account made for it (PAM checks the password), as root.
public final class VsftpdServer: @unchecked Sendable {
    public static let binary = "/usr/sbin/vsftpd"
    public static let user = "favfs-ftp"
    public static let password = "vsftpd-secret"
    static let home = "/var/tmp/favfs-ftp-home"
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: binary) && getuid() == 0 }

    public let root: URL
    /// The user's root after login (`/` over FTP); not writable by the user, as vsftpd requires.
    public let ftpRoot: URL
    /// `/files` over FTP: what the remote serves.
    public let documentRoot: URL
    public let port: Int
    private var process: BackgroundProcess?

    public init() throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-vsftpd-\(UUID().uuidString.prefix(8))")
        ftpRoot = root.appendingPathComponent("ftp")
        documentRoot = ftpRoot.appendingPathComponent("files")
        port = try FreePort.next()
        let fm = FileManager.default
        try fm.createDirectory(at: documentRoot, withIntermediateDirectories: true)
        try fm.createDirectory(at: root.appendingPathComponent("empty"), withIntermediateDirectories: true)
        _ = try Shell.run("/bin/chmod", ["755", root.path, ftpRoot.path])
        try Self.makeUser()
        try fixOwnership()
        let conf = """
        listen=YES
        listen_ipv6=NO
        listen_address=127.0.0.1
        listen_port=\(port)
        background=NO
        anonymous_enable=NO
        local_enable=YES
        write_enable=YES
        chroot_local_user=YES
        local_root=\(ftpRoot.path)
        secure_chroot_dir=\(root.appendingPathComponent("empty").path)
        pam_service_name=vsftpd
        seccomp_sandbox=NO
        xferlog_enable=YES
        vsftpd_log_file=\(root.appendingPathComponent("vsftpd.log").path)
        """
        try conf.write(to: root.appendingPathComponent("vsftpd.conf"), atomically: true, encoding: .utf8)
    }

    /// The FTP user, with a home and a password PAM accepts (idempotent).
    static func makeUser() throws {
        if (try? Shell.run("/usr/bin/id", [user]))?.status != 0 {
            let r = try Shell.run("/usr/sbin/useradd", ["--system", "--home-dir", home, "--shell", "/bin/sh", user])
            guard r.status == 0 || r.status == 9 else { throw ShellError("useradd \(user): \(r.error)") }
        }
        // vsftpd changes into the home before `local_root`: it must exist.
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        _ = try Shell.run("/usr/sbin/usermod", ["--home", home, user])
        let r = try Shell.run("/usr/sbin/chpasswd", [], stdin: "\(user):\(password)\n")
        guard r.status == 0 else { throw ShellError("chpasswd: \(r.error)") }
    }

    /// The served folder belongs to the FTP user (tests write into it as root).
    public func fixOwnership() throws {
        _ = try Shell.run("/bin/chown", ["-R", "\(Self.user):", documentRoot.path])
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    public func start() throws {
        guard process == nil else { return }
        let p = try BackgroundProcess(Self.binary, [root.appendingPathComponent("vsftpd.conf").path],
                                      logFile: root.appendingPathComponent("server.log"))
        guard FreePort.waitUntilListening(port: port, timeout: 10), p.isRunning else {
            p.stop()
            throw ShellError("vsftpd is not listening on \(port): \(p.log())")
        }
        process = p
    }

    public func stop() {
        process?.stop()
        process = nil
    }

    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    public func url(path: String = "/files/") -> String { "ftp://\(Self.user)@127.0.0.1:\(port)\(path)" }

    deinit { process?.stop(grace: 1) }
}

/// vsftpd as a conformance server ("ftp-vsftpd"): a second FTP implementation beside
/// pyftpdlib, with LIST only (no MLSD) and dot files hidden from it.
public final class VsftpdConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = VsftpdConformanceServer()
    public let name = "ftp-vsftpd"
    private let instance: SharedServer<VsftpdServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        // LIST shows minutes (days for files older than six months).
        t.modifiedPrecision = 60
        return t
    }

    private init() {
        instance = SharedServer(make: {
            guard VsftpdServer.isAvailable else { throw ShellError("vsftpd (make setup) and root are needed") }
            let s = try VsftpdServer()
            try s.start()
            return s
        }, isAlive: { $0.isRunning }, stop: { $0.remove() })
    }

    private func running() throws -> VsftpdServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    public func remote() -> ConformanceRemote {
        ConformanceRemote(url: try! running().url(), secret: VsftpdServer.password)
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        var r = remote(); r.secret = "wrong"; return r
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        var r = remote()
        r.url = "ftp://\(VsftpdServer.user)@127.0.0.1:\(try FreePort.next())/files/"
        return r
    }

    public func servedFolder() throws -> URL { try running().documentRoot }
    public func servedFolderChanged() throws { try running().fixOwnership() }
}
