import Foundation

/// ProFTPD (Debian's proftpd-core, unpacked by `make setup` into /opt/favfs-test/proftpd, as it
/// conflicts with vsftpd) serving a temp folder with the package's own configuration template,
/// changed only where a test must: a loopback port, in the foreground, logs and run files in
/// the temp folder, modules from the unpacked tree, no IPv6, run as nobody. So: MLSD and MLST,
/// `ListOptions "-l"`, Umask 022, AllowOverwrite on, no chroot (the remote's path is absolute),
/// mod_delay's login delays. Its user is vsftpd's system account (PAM or /etc/shadow).
public final class ProftpdServer: @unchecked Sendable {
    public static let tree = "/opt/favfs-test/proftpd"
    public static var binary: String { tree + "/usr/sbin/proftpd" }
    public static var isAvailable: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: binary)
            && (try? Shell.run(binary, ["-v"]))?.status == 0
    }
    public static var user: String { VsftpdServer.user }
    public static var password: String { VsftpdServer.password }

    public let root: URL
    /// What the remote serves (an absolute path on the server: no chroot).
    public let documentRoot: URL
    public let port: Int
    private var process: BackgroundProcess?

    public init() throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-proftpd-\(UUID().uuidString.prefix(8))")
        documentRoot = root.appendingPathComponent("files")
        port = try FreePort.next()
        try FileManager.default.createDirectory(at: documentRoot, withIntermediateDirectories: true)
        _ = try Shell.run("/bin/chmod", ["755", root.path])
        try VsftpdServer.makeUser()
        try fixOwnership()
        try writeConfiguration()
    }

    /// The package's template with the changes above, line by line.
    private func writeConfiguration() throws {
        let templates = URL(fileURLWithPath: Self.tree + "/usr/share/proftpd/templates")
        let template = try String(contentsOf: templates.appendingPathComponent("proftpd.conf"), encoding: .utf8)
        let run = root.path
        // Directive (a line's first word, outside any block that is commented out) → new line.
        let replacements: [String: String] = [
            "Include": "",  // modules.conf (written below) and conf.d (empty in the package)
            "UseIPv6": "UseIPv6 off",
            "Port": "Port \(port)\nDefaultAddress 127.0.0.1\nPidFile \(run)/proftpd.pid\nScoreboardFile \(run)/proftpd.scoreboard\nDelayTable \(run)/proftpd.delay\nWtmpLog off",
            "User": "User nobody",
            "TransferLog": "TransferLog \(run)/xferlog",
            "SystemLog": "SystemLog \(run)/proftpd.log",
            "ControlsSocket": "ControlsSocket \(run)/proftpd.sock",
            "ControlsLog": "ControlsLog \(run)/controls.log",
        ]
        var seen = Set<String>()
        let lines = template.components(separatedBy: "\n").map { line -> String in
            let word = line.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
            guard let new = replacements[word] else { return line }
            seen.insert(word)
            return new
        }
        for required in ["Include", "Port", "User", "SystemLog"] where !seen.contains(required) {
            throw ShellError("the proftpd.conf template has no \(required) line")
        }
        let conf = "Include \(run)/modules.conf\n" + lines.joined(separator: "\n")
        try conf.write(to: root.appendingPathComponent("proftpd.conf"), atomically: true, encoding: .utf8)
        var modules = try String(contentsOf: templates.appendingPathComponent("modules.conf"), encoding: .utf8)
        modules = modules.replacingOccurrences(of: "ModulePath /usr/lib/proftpd", with: "ModulePath \(Self.tree)/usr/lib/proftpd")
        try modules.write(to: root.appendingPathComponent("modules.conf"), atomically: true, encoding: .utf8)
    }

    /// The served folder belongs to the FTP user (tests write into it as root).
    public func fixOwnership() throws {
        _ = try Shell.run("/bin/chown", ["-R", "\(Self.user):", documentRoot.path])
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    public func start() throws {
        guard process == nil else { return }
        let p = try BackgroundProcess(Self.binary, ["--nodaemon", "--config", root.appendingPathComponent("proftpd.conf").path],
                                      logFile: root.appendingPathComponent("server.log"))
        guard FreePort.waitUntilListening(port: port, timeout: 15), p.isRunning else {
            p.stop()
            let log = (try? String(contentsOf: root.appendingPathComponent("proftpd.log"), encoding: .utf8)) ?? ""
            throw ShellError("proftpd is not listening on \(port): \(p.log()) \(log)")
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

    public func url() -> String { "ftp://\(Self.user)@127.0.0.1:\(port)\(documentRoot.path)/" }

    deinit { process?.stop(grace: 1) }
}

/// ProFTPD as a conformance server ("ftp-proftpd"): a third FTP implementation, with MLSD and
/// MLST and a server-side umask.
public final class ProftpdConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = ProftpdConformanceServer()
    public let name = "ftp-proftpd"
    private let instance: SharedServer<ProftpdServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.keepsModified = true  // MFMT
        return t
    }

    private init() {
        instance = SharedServer(make: {
            guard ProftpdServer.isAvailable else { throw ShellError("proftpd (make setup unpacks it into \(ProftpdServer.tree)) and root are needed") }
            let s = try ProftpdServer()
            try s.start()
            return s
        }, isAlive: { $0.isRunning }, stop: { $0.remove() })
    }

    private func running() throws -> ProftpdServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    public func remote() -> ConformanceRemote {
        ConformanceRemote(url: try! running().url(), secret: ProftpdServer.password)
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        var r = remote(); r.secret = "wrong"; return r
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        var r = remote()
        r.url = "ftp://\(ProftpdServer.user)@127.0.0.1:\(try FreePort.next())\(try running().documentRoot.path)/"
        return r
    }

    public func servedFolder() throws -> URL { try running().documentRoot }
    public func servedFolderChanged() throws { try running().fixOwnership() }
}
