import Foundation
import CFuse
import FavFSCore
import Logging

/// Maps libfuse's low-level operations onto the Domain. Callbacks copy their arguments and
/// either answer at once from placeholders or the cache file, or start a Task that replies
/// later: a libfuse worker thread never waits on the network.
final class Bridge: @unchecked Sendable {
    let domain: Domain
    let options: FUSEMount.Options
    let inodes = InodeTable()
    let attributes: Attributes
    /// Tells the kernel what changed at the remote.
    let notifier: KernelNotifier
    /// Performs those changes on the mount, so folder watchers hear them (nil: read-only).
    let echo: ChangeEcho?
    let log = Logger(label: "favfs.fuse")
    private let lock = NSLock()
    private var directories: [UInt64: [Item]] = [:]
    private var nextDirectory: UInt64 = 1
    /// When a read of a handle last timed out (see `readDeadline`).
    private var readTimedOutAt: [UInt64: Date] = [:]

    init(domain: Domain, options: FUSEMount.Options) {
        self.domain = domain
        self.options = options
        attributes = Attributes(uid: options.uid, gid: options.gid, umask: options.umask)
        let (domain, inodes) = (domain, inodes)
        // The echo hands back what it could not make; the notifier exists by then.
        let later = NotifierReference()
        echo = options.readOnly ? nil : ChangeEcho(mountpoint: options.mountpoint,
                                                   currentItem: { domain.cachedItem($0) },
                                                   kernelHolds: { inodes.existing($0) != nil },
                                                   notMade: { later.notifier?.enqueue([$0], echo: false) })
        notifier = KernelNotifier(inodes: inodes, echo: echo, currentVersion: { domain.contentVersion(of: $0) })
        later.notifier = notifier
    }

    // MARK: entries

    func entry(for item: Item) -> fuse_entry_param {
        var e = fuse_entry_param()
        e.ino = fuse_ino_t(inodes.remember(item.identifier))
        e.generation = 1
        e.attr = attributes.stat(of: item, inode: UInt64(e.ino))
        inodes.noteTold(UInt64(e.ino), size: Int64(e.attr.st_size))
        e.attr_timeout = options.attrTimeout
        e.entry_timeout = options.entryTimeout
        return e
    }

    func lookup(_ req: Request, _ parent: UInt64, _ name: String) {
        guard let parentId = inodes.identifier(parent) else { return req.fail(ENOENT) }
        if answeredEchoLookup(req, parentId.child(name)) { return }
        switch domain.lookupImmediately(parentId, name) {
        case .found(let item)?: return replyEntry(req, item)
        case .absent?: return replyAbsent(req)
        case nil: break
        }
        deadline(req, "lookup")
        Task {
            do {
                replyEntry(req, try await domain.lookup(parentId, name))
            } catch let error as ProviderError where error.kind == .notFound {
                replyAbsent(req)
            } catch {
                log.info("lookup \(parentId.child(name)): \(error)")
                req.fail(error)
            }
        }
    }

    func replyEntry(_ req: Request, _ item: Item) {
        var e = entry(for: item)
        if !req.reply({ fuse_reply_entry($0, &e) }) { inodes.forget(UInt64(e.ino), 1) }
    }

    /// A negative entry: the kernel caches the absence for entry_timeout.
    private func replyAbsent(_ req: Request) {
        var e = fuse_entry_param()
        e.entry_timeout = options.entryTimeout
        req.reply { fuse_reply_entry($0, &e) }
    }

    func forget(_ ino: UInt64, _ n: UInt64) { inodes.forget(ino, n) }

    /// Starts the deadline of a request that may wait on the network: `ETIMEDOUT` after
    /// `options.requestTimeout` seconds unless it was answered (see `Request.answerWithin`),
    /// and `EINTR` as soon as its caller is interrupted (see `Request.answerInterrupts`).
    func deadline(_ req: Request, _ what: String, seconds: Double? = nil, onTimeout: (@Sendable () -> Void)? = nil) {
        req.answerInterrupts()
        let log = self.log
        req.answerWithin(seconds ?? options.requestTimeout, what: what, log: { log.warning("\($0)"); onTimeout?() })
    }

    /// A read that timed out is retried by the kernel at once (the page cache's synchronous
    /// retry after a failed readahead): that retry gets a short deadline, so a program on a
    /// hung server waits one `--timeout` for its read, not two.
    private func readDeadline(handle fh: UInt64) -> Double? {
        let recent = lock.withLock { readTimedOutAt[fh].map { Date().timeIntervalSince($0) < options.requestTimeout } ?? false }
        return recent ? min(options.requestTimeout, 0.05) : nil
    }

    /// The attributes of the item an inode names; one deleted while open has no links left.
    func stat(of item: Item, as id: ItemIdentifier, inode: UInt64) -> stat {
        var st = attributes.stat(of: item, inode: inode)
        if InodeTable.isOrphan(id) { st.st_nlink = 0 }
        inodes.noteTold(inode, size: Int64(st.st_size))
        return st
    }

    func getattr(_ req: Request, _ ino: UInt64) {
        guard let id = inodes.identifier(ino), let item = domain.cachedItem(id) else { return req.fail(ENOENT) }
        var st = stat(of: item, as: id, inode: ino)
        req.reply { fuse_reply_attr($0, &st, options.attrTimeout) }
    }

    func readlink(_ req: Request, _ ino: UInt64) {
        guard let id = inodes.identifier(ino), let item = domain.cachedItem(id) else { return req.fail(ENOENT) }
        guard item.kind == .symlink, let target = item.symlinkTarget else { return req.fail(EINVAL) }
        req.reply { fuse_reply_readlink($0, target) }
    }

    // MARK: folders

    func opendir(_ req: Request, _ ino: UInt64, _ fi: fuse_file_info) {
        guard let id = inodes.identifier(ino) else { return req.fail(ENOENT) }
        deadline(req, "opendir")
        Task {
            do {
                let items = try await domain.children(of: id)
                var fi = fi
                fi.fh = lock.withLock {
                    let h = nextDirectory
                    nextDirectory += 1
                    directories[h] = items
                    return h
                }
                // Answered already (the deadline): nobody will release this handle.
                if !req.reply({ fuse_reply_open($0, &fi) }) { _ = lock.withLock { directories.removeValue(forKey: fi.fh) } }
            } catch {
                log.info("opendir \(id): \(error)")
                req.fail(error)
            }
        }
    }

    /// Fills one reply buffer from the listing snapshot taken at opendir. Offsets: 0 ".",
    /// 1 "..", then children; each entry carries the offset of the next.
    func readdir(_ req: Request, _ ino: UInt64, _ size: Int, _ offset: Int64, _ fh: UInt64, plus: Bool) {
        guard let items = lock.withLock({ directories[fh] }) else { return req.fail(EBADF) }
        let buf = UnsafeMutablePointer<CChar>.allocate(capacity: max(size, 1))
        defer { buf.deallocate() }
        var used = 0
        var index = Int(offset)
        let total = items.count + 2
        while index < total {
            let name: String
            var st = Glibc.stat()
            var e = fuse_entry_param()
            var item: Item? = nil
            if index < 2 {
                name = index == 0 ? "." : ".."
                st.st_mode = S_IFDIR
                st.st_ino = ino_t(index == 0 ? ino : InodeTable.root)
                e.attr = st // ino 0: the kernel makes no entry for . and ..
            } else {
                item = items[index - 2]
                name = item!.name
                // readdirplus sends the entry's own attributes (`entry(for:)`), not these.
                if !plus { st = attributes.stat(of: item!, inode: inodes.existing(item!.identifier) ?? UInt64(0xffff_ffff)) }
            }
            let remaining = size - used
            let needed: Int = name.withCString { cname in
                if plus {
                    if let item {
                        // Compute the size first: a lookup is counted only for entries sent.
                        let n = fuse_add_direntry_plus(req.raw, nil, 0, cname, &e, off_t(index + 1))
                        guard n <= remaining else { return n }
                        e = entry(for: item)
                    }
                    return fuse_add_direntry_plus(req.raw, buf + used, remaining, cname, &e, off_t(index + 1))
                } else {
                    return fuse_add_direntry(req.raw, buf + used, remaining, cname, &st, off_t(index + 1))
                }
            }
            if needed > remaining { break }
            used += needed
            index += 1
        }
        req.reply { fuse_reply_buf($0, buf, used) }
    }

    func releasedir(_ req: Request, _ fh: UInt64) {
        lock.withLock { directories[fh] = nil }
        req.ok()
    }

    // MARK: files

    func open(_ req: Request, _ ino: UInt64, _ fi: fuse_file_info) {
        guard let id = inodes.identifier(ino) else { return req.fail(ENOENT) }
        let flags = withUnsafePointer(to: fi) { favfs_fi_flags($0) }
        let write = flags & O_ACCMODE != O_RDONLY, truncate = flags & O_TRUNC != 0
        if !write && !truncate {
            // Reading needs no network: answer at once.
            do {
                let (handle, keep) = try domain.openFile(id)
                var fi = fi
                fi.fh = handle
                favfs_fi_set_keep_cache(&fi, keep ? 1 : 0)
                refreshSizeIfOutdated(ino, handle)
                req.reply { fuse_reply_open($0, &fi) }
            } catch {
                log.info("open \(id): \(error)")
                req.fail(error)
            }
            return
        }
        deadline(req, "open")
        Task {
            do {
                let (handle, _) = try await domain.openFile(id, write: write, truncate: truncate)
                var fi = fi
                fi.fh = handle
                if !truncate { refreshSizeIfOutdated(ino, handle) }
                if !req.reply({ fuse_reply_open($0, &fi) }) { domain.closeFile(handle) }
            } catch {
                log.info("open \(id) for writing: \(error)")
                req.fail(error)
            }
        }
    }

    /// The file opened is of another size than the kernel was told (a listing replaced its
    /// placeholder and the kernel's attributes are not refreshed yet: the notifier's message
    /// is on its way): the kernel is told to ask again before the open returns, so the first
    /// read sees the size of the content it reads — not cut at the old size, nor padded to it
    /// with zeros. No page is touched, so this is safe in a handler.
    private func refreshSizeIfOutdated(_ ino: UInt64, _ handle: UInt64) {
        guard let size = domain.openSize(handle: handle), let told = inodes.toldSize(ino), told != size else { return }
        notifier.refreshAttributes(ino)
    }

    func read(_ req: Request, _ ino: UInt64, _ size: Int, _ offset: Int64, _ fh: UInt64) {
        if let r = domain.readIfPresent(handle: fh, offset: offset, size: size) {
            return reply(req, r, ino)
        }
        deadline(req, "read", seconds: readDeadline(handle: fh), onTimeout: { [self] in
            lock.withLock { readTimedOutAt[fh] = Date() }
        })
        Task {
            do {
                reply(req, try await domain.read(handle: fh, offset: offset, size: size), ino)
            } catch {
                log.warning("read: \(error)")
                req.fail(error)
            }
        }
    }

    private func reply(_ req: Request, _ r: ReadResult, _ ino: UInt64) {
        defer { r.done?() }
        if let version = r.grewToVersion {
            // Told here, before the reply; the listing's notification of the same change is
            // then not sent again: arriving while the reader's next getattr is in flight, it
            // would make the kernel drop that answer and end the read at the old size.
            inodes.noteRefreshed(ino, version: version)
            notifier.refreshAttributes(ino)
        }
        req.reply { raw in
            if r.length == 0 { fuse_reply_buf(raw, nil, 0); return }
            let rc = favfs_reply_data_fd(raw, r.fd, off_t(r.offset), r.length)
            if rc != 0 { log.debug("reply to read failed: \(rc)") }
        }
    }

    func release(_ req: Request, _ fh: UInt64) {
        lock.withLock { _ = readTimedOutAt.removeValue(forKey: fh) }
        domain.closeFile(fh)
        req.ok()
    }

    // MARK: filesystem

    func statfs(_ req: Request) {
        deadline(req, "statfs")
        Task {
            let q = await domain.quota()
            var s = Glibc.statvfs()
            let bs: UInt = 4096
            if let avail = q?.availableBytes {
                // What the remote says (WebDAV RFC 4331 quota, SFTP statvfs@openssh.com).
                let used = q?.usedBytes ?? 0
                s.f_blocks = fsblkcnt_t((q?.totalBytes ?? avail + used) / Int64(bs))
                s.f_bfree = fsblkcnt_t((q?.freeBytes ?? avail) / Int64(bs))
                s.f_bavail = fsblkcnt_t(avail / Int64(bs))
            } else {
                // The remote does not say: the cache disk's numbers, which is where written
                // files wait for their upload (see docs/behaviour.md, "df and statfs").
                if let disk = cacheDisk(domain.content.directory.path) {
                    let unit = UInt64(disk.f_frsize)
                    s.f_blocks = fsblkcnt_t(UInt64(disk.f_blocks) * unit / UInt64(bs))
                    s.f_bfree = fsblkcnt_t(UInt64(disk.f_bfree) * unit / UInt64(bs))
                    s.f_bavail = fsblkcnt_t(UInt64(disk.f_bavail) * unit / UInt64(bs))
                }
            }
            s.f_bsize = bs
            s.f_frsize = bs
            s.f_namemax = 255
            s.f_files = 1 << 30
            s.f_ffree = 1 << 30
            s.f_favail = 1 << 30
            req.reply { fuse_reply_statfs($0, &s) }
        }
    }
}

/// Lets the echo reach the notifier made after it (set once, in `Bridge.init`).
private final class NotifierReference: @unchecked Sendable {
    var notifier: KernelNotifier?
}

/// The numbers of the file system holding `path` (the cache disk), or nil.
private func cacheDisk(_ path: String) -> statvfs? {
    var disk = statvfs()
    return statvfs(path, &disk) == 0 ? disk : nil
}
