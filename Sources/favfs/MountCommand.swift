import ArgumentParser
import Foundation
import Logging
import Providers

/// `favfs mount MOUNTPOINT [--remote NAME|URL]`.
struct MountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Mount a remote on a folder; returns once the mount answers.",
        discussion: """
            --remote takes a URL (anything with "://") or the name of a remote added with 'favfs remote add'; without --remote the default remote is mounted. Options come from the URL's query, then the remote's stored options, then --option on this command line (later ones win).

            Examples:
              favfs mount ~/Remote --remote dav://nas.local:8080/files/
              echo "$PASS" | favfs mount ~/Remote --remote davs://me@dav.example.com/ \\
                  --password-stdin
              favfs mount /mnt/ref --remote file:///srv/data --cache-size 2G
              favfs mount ~/Remote --remote nas      # a named remote (favfs remote add)
              favfs mount ~/Remote                   # the default remote
              favfs mount ~/Data --remote data --option region=eu-central-1
            """)

    @Argument(help: "The folder to mount on (must exist).", completion: .directory)
    var mountpoint: String

    @Option(help: ArgumentHelp("A remote's name (favfs remote list) or a URL: dav://[user@]host[:port]/path, davs://…, s3://bucket/prefix, sftp://user@host/path, smb://user@host/share/path, dropbox:///path, onedrive:///path, ftp(s)://…, http(s)://…, favart://host, file:///path. Default: the default remote.", valueName: "name|url"), completion: .custom { _, _, _ in RemoteCompletion.names() })
    var remote: String?

    @Option(name: .customLong("option"), help: ArgumentHelp("A provider option, KEY=VALUE (repeatable; wins over the remote's stored options and the URL's query).", valueName: "key=value"))
    var options: [String] = []

    @Option(help: "Where placeholders and content are kept (default: $XDG_CACHE_HOME/favfs/<remote>).", completion: .directory)
    var cacheDir: String?

    @Option(parsing: .unconditional, help: "Content kept on disk at most; least recently used content is evicted beyond it (e.g. 512M, 10G).")
    var cacheSize: String = "10G"

    @Option(parsing: .unconditional, help: "Seconds a folder listing is used as is; after that it is still served while it is revalidated.")
    var dirCacheTime: Double = 60

    @Option(parsing: .unconditional, help: "Seconds between background checks for changes at the remote in the folders in use (listed recently, holding open files, or pinned); 0: no checks.")
    var pollInterval: Double = 15

    @Option(parsing: .unconditional, help: "Seconds the kernel may keep names and attributes without asking favfs.")
    var attrTimeout: Double = 1

    @Option(parsing: .unconditional, help: "Seconds a call that waits on the server (ls of a folder not listed yet, a read of content not here yet, fsync with --fsync remote, mkdir, mv...) may take before it fails with ETIMEDOUT; 0: no limit. The work goes on in the background.")
    var timeout: Double = 30

    @Option(help: ArgumentHelp("What fsync waits for: 'local' (the content and its journal on this machine's disk; the upload follows in the background once the file goes quiet) or 'remote' (the server confirmed the upload, which can take as long as the upload and fails if the server does).", valueName: "local|remote"),
            completion: .list(["local", "remote"]))
    var fsync: String = "local"

    @Flag(help: "Stay in the foreground (logs on stderr) instead of returning once mounted.")
    var foreground = false

    @Flag(help: "Mount read-only even where the remote could be written.")
    var readOnly = false

    @Flag(help: "Let other users (and root) into the mount, e.g. for a Samba export or a container; the kernel still checks the modes. A plain user needs 'user_allow_other' in /etc/fuse.conf.")
    var allowOther = false

    @Flag(help: "Write no freedesktop thumbnails (~/.cache/thumbnails) from the remote's previews.")
    var noThumbnails = false

    @Flag(help: "Send no desktop notifications (a conflict copy, an upload the server refused, the remote offline and back) over the session bus.")
    var noNotifications = false

    @Flag(help: "No extended attributes (user.favfs.state, user.favfs.pin): the kernel then stops asking for them, which saves a round trip per write(2) and two per file in 'ls -l'.")
    var noXattrs = false

    @Option(parsing: .unconditional, help: "The owner every file and folder reports (default: the user who mounts).")
    var uid: UInt32?

    @Option(parsing: .unconditional, help: "The group every file and folder reports (default: the user's group).")
    var gid: UInt32?

    @Option(help: ArgumentHelp("Permission bits to take away, in octal: files report 0666 and folders 0777 without them (e.g. 022; default: the remote's modes, or 0644/0755).", valueName: "octal"))
    var umask: String?

    @Flag(name: [.short, .long], help: "Print nothing when the mount succeeds (as under mount -t fuse.favfs, which implies it).")
    var quiet = false

    @Flag(help: "Read the remote's password from the first line of standard input (instead of a stored secret).")
    var passwordStdin = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error.",
            completion: .list(["trace", "debug", "info", "notice", "warning", "error"]))
    var logLevel: String = "info"

    @Flag(help: .hidden)
    var debugFuse = false

    /// The kernel's per-mount flags from mount(8) options (`noexec,nosuid,nodev`, `exec`...),
    /// as the mount helper form passes them (`user` implies noexec, nosuid and nodev).
    @Option(help: .hidden)
    var kernelFlags: String?

    /// Set by the parent when it re-executes itself as the daemon: where to report "mounted".
    @Option(help: .hidden)
    var notifyFd: Int32?

    func validate() throws {
        guard ByteSize.parse(cacheSize) != nil else { throw ValidationError("--cache-size: '\(cacheSize)' is not a size (e.g. 512M, 10G)") }
        guard ByteSize.hasUnit(cacheSize) else {
            throw ValidationError("--cache-size: '\(cacheSize)' has no unit: write \(cacheSize)M or \(cacheSize)G (or \(cacheSize)B for bytes)")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level: '\(logLevel)' is not a level") }
        guard ["local", "remote"].contains(fsync) else { throw ValidationError("--fsync: '\(fsync)' is neither local nor remote") }
        for (name, value) in [("--dir-cache-time", dirCacheTime), ("--poll-interval", pollInterval), ("--attr-timeout", attrTimeout), ("--timeout", timeout)] {
            try Self.checkSeconds(name, value)
        }
        if let umask, Self.octal(umask) == nil { throw ValidationError("--umask: '\(umask)' is not an octal mode from 000 to 777 (e.g. 022)") }
        if let kernelFlags, let bad = kernelFlags.split(separator: ",").first(where: { !MountHelperArguments.kernelFlags.contains(String($0)) }) {
            throw ValidationError("--kernel-flags: '\(bad)' is not one of \(MountHelperArguments.kernelFlags.sorted().joined(separator: ", "))")
        }
    }

    /// A number of seconds must be finite and not negative (argument-parser made a Double of it).
    static func checkSeconds(_ name: String, _ value: Double, zero: Bool = true) throws {
        guard value.isFinite, zero ? value >= 0 : value > 0 else {
            let shown = value.isFinite && value == value.rounded() ? String(Int(value)) : String(value)
            throw ValidationError("\(name) \(shown): give a number of seconds \(zero ? "≥ 0" : "> 0") (e.g. \(name) 30 or \(name) 0.5)")
        }
    }

    /// `--umask` as a mode, nil when it is not octal digits within 0777.
    static func octal(_ text: String) -> mode_t? {
        guard !text.isEmpty, text.count <= 4, text.allSatisfy({ ("0"..."7").contains($0) }), let v = mode_t(text, radix: 8), v <= 0o777 else { return nil }
        return v
    }

    func run() async throws {
        do { try await mount() } catch let e as CLIError { e.exit() }
    }

    private func mount() async throws {
        let configuration = try RemoteSelection.resolve(remote, overrides: OptionPairs.parse(options))
        try RemoteOptionCheck.validate(configuration)
        let remoteURL = configuration.url
        guard let mp = Paths.real(mountpoint) else {
            throw CLIError("favfs: mount point \(mountpoint) does not exist (create the folder first)", status: .usage)
        }
        let cacheDir = (self.cacheDir.map { ($0 as NSString).expandingTildeInPath }) ?? Paths.defaultCacheDir(slug: remoteURL.slug)
        if allowOther { try Self.checkAllowOther() }
        if notifyFd == nil, let size = ByteSize.parse(cacheSize), size < 64 << 20 {
            // Legal (the cache grows past it while files are open), but reads then evict each other.
            FileHandle.standardError.write(Data("favfs: warning: --cache-size \(cacheSize) is below 64 MiB: content will be evicted and fetched again often\n".utf8))
        }

        if foreground || notifyFd != nil {
            let status = await MountRunner(command: self, configuration: configuration, mountpoint: mp, cacheDir: cacheDir).run()
            throw ExitCode(status)
        }
        // Daemonize by re-executing ourselves in the foreground (fuse_daemonize hangs once
        // Swift concurrency runs); we exit only once the child says the mount answers.
        try FileManager.default.createDirectory(atPath: cacheDir, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        var password: String? = nil
        if passwordStdin { password = try SecretInput.read(prompt: "Password for \(RemoteSelection.label(configuration)): ") }
        // The child gets the remote's name (it reads the remotes file itself) or the URL without
        // its password; a secret only ever travels on its stdin, never in its argv.
        let childRemote: String
        if let name = configuration.name {
            childRemote = name
        } else {
            let (url, urlPassword) = Self.splitPassword(remote ?? "")
            childRemote = url
            if password == nil, let urlPassword { password = urlPassword }
        }
        var args = ["mount", mp, "--remote", childRemote, "--cache-dir", cacheDir, "--cache-size", cacheSize,
                    "--dir-cache-time", String(dirCacheTime), "--poll-interval", String(pollInterval), "--attr-timeout", String(attrTimeout), "--timeout", String(timeout),
                    "--log-level", logLevel, "--fsync", fsync, "--notify-fd", "3"]
        for o in options { args += ["--option", o] }
        if readOnly { args.append("--read-only") }
        if allowOther { args.append("--allow-other") }
        if noXattrs { args.append("--no-xattrs") }
        if noThumbnails { args.append("--no-thumbnails") }
        if noNotifications { args.append("--no-notifications") }
        if let uid { args += ["--uid", String(uid)] }
        if let gid { args += ["--gid", String(gid)] }
        if let umask { args += ["--umask", umask] }
        if let kernelFlags { args += ["--kernel-flags", kernelFlags] }
        if password != nil { args.append("--password-stdin") }
        let logPath = (cacheDir as NSString).appendingPathComponent("favfs.log")
        let outcome = try Daemon.spawn(arguments: args, stdin: password.map { $0 + "\n" }, logPath: logPath)
        switch outcome {
        case .mounted(let offline):
            if !quiet { print("favfs: mounted \(RemoteSelection.label(configuration)) on \(mp)") }
            if let offline {
                FileHandle.standardError.write(Data("""
                    favfs: offline: \(offline)
                    favfs: browsing the placeholders of the last session; content not cached here fails (EIO) until the server answers again

                    """.utf8))
            }
        case .failed(let message, let status):
            throw CLIError("favfs: \(message)", status: status)
        }
    }

    /// fusermount3 refuses `allow_other` to a plain user unless /etc/fuse.conf says
    /// `user_allow_other`; say so before mounting rather than relay its terse refusal.
    static func checkAllowOther(fuseConf: String = "/etc/fuse.conf") throws {
        guard getuid() != 0 else { return }
        let text = (try? String(contentsOfFile: fuseConf, encoding: .utf8)) ?? ""
        let enabled = text.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == "user_allow_other" }
        guard enabled else {
            throw CLIError("favfs: --allow-other needs the line 'user_allow_other' in \(fuseConf) (as root: echo user_allow_other >> \(fuseConf))",
                           status: .configuration)
        }
    }

    /// The URL without its password, and the password (percent-decoded) if it had one.
    static func splitPassword(_ url: String) -> (url: String, password: String?) {
        guard var comps = URLComponents(string: url), let password = comps.password else { return (url, nil) }
        comps.password = nil
        return (comps.string ?? url, password)
    }
}
