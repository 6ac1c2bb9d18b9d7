import Foundation
import Logging
import FavFSCore
import Providers
import FUSEBridge

/// The mount process proper (`favfs mount --foreground`, or the daemon child): opens the
/// cache, connects to the remote, mounts, serves until unmounted, then evicts content.
struct MountRunner {
    let command: MountCommand
    /// The remote: URL, merged options, the stored secret (a named remote) and its name.
    let configuration: RemoteConfiguration
    let mountpoint: String
    let cacheDir: String
    var remote: RemoteURL { configuration.url }

    func run() async -> Int32 {
        MallocTuning.apply()
        let notifier = Notifier(fd: command.notifyFd)
        if command.notifyFd != nil {
            setsid() // the daemon leaves the terminal's session: closing the terminal does not kill it
        }
        let level = Logger.Level(rawValue: command.logLevel) ?? .info
        let journal = JournalLogHandler.stderrIsJournal()
        LoggingSystem.bootstrap { label in
            if journal { return JournalLogHandler(label: label, logLevel: level) }
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = level
            return h
        }
        let log = Logger(label: "favfs")
        do {
            return try await serve(notifier: notifier, log: log)
        } catch {
            let message = "\(error)"
            let status = (error as? CLIError)?.status ?? .failure
            log.error("\(message)")
            notifier.failed(message, status: status)
            if command.notifyFd == nil { FileHandle.standardError.write(Data("favfs: \(message)\n".utf8)) }
            return status.rawValue
        }
    }

    private func serve(notifier: Notifier, log: Logger) async throws -> Int32 {
        let (mounted, fstype) = Paths.isMountpoint(mountpoint)
        if mounted, fstype?.hasPrefix("fuse") == true {
            throw CLIError("\(mountpoint) is already mounted (\(fstype!)); run 'favfs unmount \(mountpoint)' first", status: .usage)
        }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: mountpoint, isDirectory: &isDir), isDir.boolValue else {
            throw CLIError("mount point \(mountpoint) is not a folder", status: .usage)
        }
        guard FileManager.default.fileExists(atPath: "/dev/fuse") else {
            throw CLIError("FUSE is not available: /dev/fuse is missing (load the fuse module or install fuse3)", status: .configuration)
        }

        // Private by default: the cache holds names and content of the user's files. Everything
        // this process creates is the user's only (0600 files, 0700 folders), and a cache dir
        // made readable by an older version is closed again.
        umask(0o077)
        do { try FileManager.default.createDirectory(atPath: cacheDir, withIntermediateDirectories: true) }
        catch { throw CLIError("cannot create the cache dir \(cacheDir): \(error.localizedDescription)", status: .ioError) }
        Paths.makePrivate(cacheDir)
        // One mount per cache dir: the lock lives as long as this process.
        let lockFD = open((cacheDir as NSString).appendingPathComponent("lock"), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0, flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            throw CLIError("the cache dir \(cacheDir) is in use by another favfs mount", status: .configuration)
        }
        try Self.claim(cacheDir: cacheDir, for: remote)

        var password: String? = nil
        if command.passwordStdin { password = readLine(strippingNewline: true) ?? "" }

        let store = try Self.openStore(cacheDir: cacheDir)
        var options = DomainOptions()
        options.dirCacheTime = command.dirCacheTime
        options.pollInterval = command.pollInterval
        options.cacheLimit = ByteSize.parse(command.cacheSize)!
        options.readOnly = command.readOnly
        options.fsyncWaitsForRemote = command.fsync == "remote"
        let content = try ContentCache(directory: URL(fileURLWithPath: cacheDir).appendingPathComponent("content"),
                                       store: store, limit: options.cacheLimit)
        Self.warnIfCacheLimitExceedsDisk(cacheDir: cacheDir, limit: options.cacheLimit, used: (try? store.contentBytes()) ?? 0)
        // Content the database does not know (it was lost or damaged while files were dirty):
        // kept in CACHEDIR/lost+found, never deleted.
        if content.rescueUnknownFiles() > 0, FileManager.default.fileExists(atPath: content.lostAndFound.directory.path) {
            log.warning("content not known to the placeholder database was kept in \(content.lostAndFound.directory.path)")
        }
        var configuration = self.configuration
        if let password { configuration.secret = password }   // --password-stdin wins over a stored secret
        let provider: any Provider
        do { provider = try ProviderFactory.make(configuration) }
        catch let e as ProviderError { throw CLIError(Self.explain(e, remote: remote, name: configuration.name), status: .of(e)) }
        let domain = Domain(provider: provider, store: store, content: content, options: options)
        TransferCounting.countCurlTransfers()  // bytes and rates of transfers, for favfs status

        var offline: String?
        do {
            switch try await domain.connect(timeout: command.timeout) {
            case .online:
                log.info("connected to \(remote)")
                // The journal's dirty items first: a root listing merged before they are known
                // would drop a file created here before a crash, and take a dirty file another
                // client changed for outdated clean content (its cache file, the only copy, would
                // go). Found by the reference model (ReferenceModelTests).
                if domain.isWritable { domain.resumeUploads() }
                domain.listRootAhead()
                domain.providePinnedContent()   // pinned content changed or missing since the last mount
            case .offline(let e):
                log.warning("offline: \(e)")
                offline = "\(e)"
                if domain.isWritable { domain.resumeUploads() }
            }
        } catch let e as ProviderError {
            throw CLIError(Self.explain(e, remote: remote, name: configuration.name), status: .of(e))
        }

        var fuseOptions = FUSEMount.Options(mountpoint: mountpoint, fsName: "favfs:\(remote)")
        fuseOptions.readOnly = !domain.isWritable
        fuseOptions.entryTimeout = command.attrTimeout
        fuseOptions.attrTimeout = command.attrTimeout
        fuseOptions.requestTimeout = command.timeout
        fuseOptions.debug = command.debugFuse
        fuseOptions.allowOther = command.allowOther
        fuseOptions.kernelFlags = command.kernelFlags?.split(separator: ",").map(String.init) ?? []
        fuseOptions.extendedAttributes = !command.noXattrs
        if let uid = command.uid { fuseOptions.uid = uid }
        if let gid = command.gid { fuseOptions.gid = gid }
        fuseOptions.umask = command.umask.flatMap(MountCommand.octal)
        let fuse = FUSEMount(domain: domain, options: fuseOptions)

        let thumbnails = try? ThumbnailStore(cacheDirectory: URL(fileURLWithPath: cacheDir))
        // File managers' thumbnails from the remote's previews (a remote that makes them).
        let desktopThumbnails = command.noThumbnails ? nil : thumbnails.flatMap {
            FreedesktopThumbnails(domain: domain, store: $0, mountpoint: mountpoint)
        }
        desktopThumbnails?.start()
        // Desktop notifications of conflicts, refused uploads and the remote offline and back.
        let notifications = command.noNotifications ? nil
            : DesktopNotifications(domain: domain, mountpoint: mountpoint, remote: configuration.name ?? remote.description)
        let control = ControlServer(domain: domain, remote: remote.description, name: configuration.name, mountpoint: mountpoint,
                                    thumbnails: thumbnails, beforeUnmount: { fuse.prepareForUnmount() },
                                    unmountCancelled: { fuse.unmountCancelled() })
        try ControlChannel.listen(mountpoint: mountpoint) { control.serve($0) }
        do { try fuse.mount() } catch { throw CLIError("\(error)", status: .configuration) }

        // The loop blocks its thread until the kernel unmount.
        let finished = LoopThread.start { fuse.run() }
        installSignalHandlers(log: log)

        guard await MountProbe.answers(mountpoint, timeout: 30) else {
            _ = try? Process.run(URL(fileURLWithPath: "/bin/fusermount3"), arguments: ["-u", "-z", mountpoint])
            throw CLIError("the mount on \(mountpoint) did not answer", status: .temporaryFailure)
        }
        BackingDevice.raiseReadahead(mountpoint: mountpoint, kilobytes: 1024, log: log)
        log.info("mounted \(configuration.name.map { "\($0) (\(remote))" } ?? remote.description) on \(mountpoint) (cache \(cacheDir))")
        notifier.mounted(offline: offline)
        notifications?.start()
        let systemd = SystemdNotify()
        systemd.ready(status: "mounted \(remote) on \(mountpoint)")
        let reporter = systemd.isActive ? Task { await Self.reportUploads(domain, to: systemd, mountpoint: mountpoint) } : nil
        let poller = domain.startPolling()

        let rc = await finished.value
        poller?.cancel()
        reporter?.cancel()
        let pendingAtEnd = domain.pendingUploads().items
        systemd.stopping(status: pendingAtEnd > 0 ? "unmounted; finishing \(Plural.count(Int(pendingAtEnd), "upload"))" : "unmounted")
        // Unmounted without 'favfs unmount' (fusermount3 -u, shutdown): finish what can be
        // finished in a short while; the rest stays in the journal for the next mount.
        if domain.pendingUploads().items > 0 {
            log.info("unmounted with uploads pending: finishing them (up to 30 s)")
            let drained = Task { await domain.drainUploads { _, _ in } }
            let deadline = Date().addingTimeInterval(30)
            while domain.pendingUploads().items > 0 && Date() < deadline { try? await Task.sleep(nanoseconds: 200_000_000) }
            drained.cancel()
            let left = domain.pendingUploads().items
            if left > 0 { log.warning("\(Plural.count(Int(left), "upload")) still pending: kept in the cache, resumed at the next mount") }
        }
        // Nothing of this core runs on after the database closes: uploads left are in the
        // journal, read-ahead and pinned downloads start again at the next mount.
        _ = await domain.stopBackgroundWork(within: 10)
        notifications?.stop()   // after the last uploads: a conflict among them is told too
        let keep = control.keepCache
        let (files, bytes) = domain.shutdown(keepContent: keep)
        log.info(keep ? "unmounted; content kept" : "unmounted; evicted \(Plural.count(Int(files), "file")) (\(ByteSize.format(bytes)))")
        control.finish("evicted \(files) \(bytes)")
        if let socket = ControlChannel.path(for: mountpoint) { unlink(socket) }
        close(lockFD)
        return rc == 0 ? 0 : 1
    }

    /// `STATUS=` for `systemctl status`: the pending uploads, sent when they change.
    private static func reportUploads(_ domain: Domain, to systemd: SystemdNotify, mountpoint: String) async {
        var last = ""
        while !Task.isCancelled {
            let pending = domain.pendingUploads()
            let text = pending.items == 0 ? "mounted on \(mountpoint); all uploaded"
                : "mounted on \(mountpoint); \(Plural.count(Int(pending.items), "upload")) pending (\(ByteSize.format(pending.bytes)))"
            if text != last { systemd.status(text); last = text }
            try? await Task.sleep(nanoseconds: 2_000_000_000)
        }
    }

    /// A cache dir holds one remote's placeholders and journal: mounted with another remote, it
    /// would serve names that are not there and upload pending changes to the wrong server. The
    /// remote is written in `CACHEDIR/remote` at first use and compared at every mount.
    static func claim(cacheDir: String, for remote: RemoteURL) throws {
        let path = (cacheDir as NSString).appendingPathComponent("remote")
        let mine = remote.description
        if let owner = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines), !owner.isEmpty {
            guard owner == mine else {
                throw CLIError("the cache dir \(cacheDir) belongs to \(owner), not \(mine): give this remote another --cache-dir (remove that one only once nothing in it is needed: pending uploads, lost+found)",
                               status: .configuration)
            }
            return
        }
        do { try (mine + "\n").write(toFile: path, atomically: true, encoding: .utf8) }
        catch { throw CLIError("cannot write \(path): \(error.localizedDescription)", status: .ioError) }
    }

    /// A `--cache-size` larger than the cache disk can hold is not an error (favfs evicts when
    /// the disk fills), but the user should know the limit is not the real one.
    static func warnIfCacheLimitExceedsDisk(cacheDir: String, limit: Int64, used: Int64) {
        var fs = statvfs()
        guard statvfs(cacheDir, &fs) == 0 else { return }
        let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
        guard limit > free + used else { return }
        Logger(label: "favfs").warning("--cache-size \(ByteSize.format(limit)) is more than the cache disk holds (\(ByteSize.format(free)) free at \(cacheDir)): when the disk fills, favfs evicts least recently used content, and a read fails with ENOSPC only when nothing can be evicted")
    }

    /// The placeholder database of `cacheDir`. A damaged one (truncated, overwritten: SQLite's
    /// own check fails) is set aside as `placeholders.sqlite.damaged-TIME` and a new one is
    /// made: placeholders come back from the server, and content that was not uploaded yet is
    /// kept in `CACHEDIR/lost+found` (see `ContentCache.rescueUnknownFiles`).
    static func openStore(cacheDir: String) throws -> PlaceholderStore {
        let path = (cacheDir as NSString).appendingPathComponent("placeholders.sqlite")
        do {
            return try PlaceholderStore(path: path)
        } catch let first {
            let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
            let aside = path + ".damaged-" + stamp
            for suffix in ["", "-wal", "-shm", ".corrupt"] { _ = rename(path + suffix, aside + suffix) }
            let message = "favfs: the placeholder database \(path) could not be used (\(first)); it was kept as \(aside) and a new one made. Content not uploaded yet is kept in \((cacheDir as NSString).appendingPathComponent("lost+found"))."
            FileHandle.standardError.write(Data((message + "\n").utf8))
            Logger(label: "favfs").error("\(message)")
            do { return try PlaceholderStore(path: path) }
            catch { throw CLIError("cannot open the placeholder database in \(cacheDir): \(error) (before: \(first))", status: .ioError) }
        }
    }

    /// A provider error at mount time (or in `favfs remote test`), in words a user can act on.
    /// `name`: the named remote it came from (the fix is then in the remotes file); `offline`:
    /// whether to say that nothing is cached to browse offline.
    static func explain(_ e: ProviderError, remote: RemoteURL, name: String? = nil, offline: Bool = true) -> String {
        switch e.kind {
        case .denied:
            let fix: String
            if remote.kind == .dropbox || remote.kind == .onedrive {
                // The refresh token, not a user and password: the detail says what to do.
                fix = ": \(e.detail)"
            } else if remote.user == nil && remote.kind == .webdav {
                fix = name.map { ": give the user in the URL (dav://USER@host/…) and the password: favfs remote add \($0) URL --password-stdin --force" }
                    ?? ": give the user in the URL (dav://USER@host/…) and the password with --password-stdin"
            } else {
                fix = name.map { ": check the user in the URL and the secret stored for '\($0)' (replace it: favfs remote add \($0) URL --password-stdin --force)" }
                    ?? ": check the user and password"
            }
            return "\(remote): authentication failed or access denied\(statusText(e, remote))" + fix
        case .notFound: return "\(remote): no such folder at the remote\(statusText(e, remote))"
        case .unreachable, .timedOut:
            return offline ? "cannot reach \(remote) and nothing is cached to browse offline: \(e.detail)"
                           : "cannot reach \(remote): \(e.detail)"
        default: return "\(e)"
        }
    }

    /// " (HTTP 401)" over HTTP, " (reply 530)" for FTP, " (status N)" otherwise; "" without one.
    private static func statusText(_ e: ProviderError, _ remote: RemoteURL) -> String {
        guard let status = e.status, status != 0 else { return "" }
        switch remote.kind {
        case .webdav, .httpIndex, .s3, .favart, .dropbox, .onedrive: return " (HTTP \(status))"
        case .ftp: return " (reply \(status))"
        default: return " (status \(status))"
        }
    }

    /// SIGTERM/SIGINT/SIGHUP unmount (lazily) so the loop ends and content is evicted cleanly.
    private func installSignalHandlers(log: Logger) {
        let mp = mountpoint
        for sig in [SIGTERM, SIGINT, SIGHUP] {
            signal(sig, SIG_IGN)
            let src = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            src.setEventHandler {
                log.info("signal \(sig): unmounting \(mp)")
                _ = try? Process.run(URL(fileURLWithPath: "/bin/fusermount3"), arguments: ["-u", "-z", mp])
            }
            src.resume()
            SignalSources.keep(src)
        }
        signal(SIGPIPE, SIG_IGN)
    }
}
