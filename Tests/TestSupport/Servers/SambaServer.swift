import Foundation

/// A real Samba smbd on a free loopback port, sharing a folder as `files`, with one user
/// (`favfs`, mapped to the local user the tests run as, who must be root for smbd to run).
/// Samba's defaults but for what a private instance needs (its port, its own state folders,
/// no NetBIOS, no printers). It runs in the foreground as a `BackgroundProcess`.
public final class SambaServer: @unchecked Sendable {
    public let root: URL
    /// The shared folder (the share `files`).
    public let share: URL
    public let port: Int
    public let user = "favfs"
    public let password = "favfs-smb-secret"
    private var process: BackgroundProcess?

    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/smbd") && FileManager.default.isExecutableFile(atPath: "/usr/bin/smbpasswd")
    }

    public init() throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-smbd-\(UUID().uuidString.prefix(8))")
        share = root.appendingPathComponent("share")
        port = try FreePort.next()
        let r = root.path
        for dir in ["share", "private", "lock", "state", "cache", "pid", "log", "ncalrpc"] {
            try FileManager.default.createDirectory(atPath: "\(r)/\(dir)", withIntermediateDirectories: true)
        }
        let localUser = String(cString: getpwuid(getuid()).pointee.pw_name)
        try "\(localUser) = \(user)\n".write(toFile: "\(r)/users.map", atomically: true, encoding: .utf8)
        let config = """
        [global]
            smb ports = \(port)
            interfaces = 127.0.0.1
            bind interfaces only = yes
            disable netbios = yes
            private dir = \(r)/private
            lock directory = \(r)/lock
            state directory = \(r)/state
            cache directory = \(r)/cache
            pid directory = \(r)/pid
            ncalrpc dir = \(r)/ncalrpc
            log file = \(r)/log/smbd.log
            passdb backend = tdbsam:\(r)/private/passdb.tdb
            username map = \(r)/users.map
            load printers = no
            printing = bsd
            printcap name = /dev/null
            disable spoolss = yes
        [files]
            path = \(share.path)
            read only = no

        """
        try config.write(toFile: "\(r)/smb.conf", atomically: true, encoding: .utf8)
        let added = try Shell.run("/usr/bin/smbpasswd", ["-c", "\(r)/smb.conf", "-s", "-a", localUser], stdin: "\(password)\n\(password)\n")
        guard added.status == 0 else { throw ShellError("smbpasswd -a \(localUser) failed: \(added.error)\(added.output)") }
    }

    public func start() throws {
        guard process == nil else { return }
        let p = try BackgroundProcess("/usr/sbin/smbd", ["--foreground", "--no-process-group", "--debug-stdout", "-d", "1",
                                                         "--configfile=\(root.path)/smb.conf"],
                                      logFile: root.appendingPathComponent("smbd.out"))
        guard FreePort.waitUntilListening(port: port, timeout: 15) else {
            p.stop()
            throw ShellError("smbd did not start on port \(port): \(p.log())")
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
}
