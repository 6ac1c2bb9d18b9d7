import Foundation
import CFuse
import FavFSCore

/// Write-side operations. Content writes are answered from local disk at once; namespace
/// changes wait for the remote (in a Task) before they are answered.
extension Bridge {
    func create(_ req: Request, _ parent: UInt64, _ name: String, _ fi: fuse_file_info) {
        guard let parentId = inodes.identifier(parent) else { return req.fail(ENOENT) }
        let exclusive = withUnsafePointer(to: fi) { favfs_fi_flags($0) } & O_EXCL != 0
        do {
            // A name the listing in memory says is free: all local, answered here.
            if let (item, handle) = try domain.createImmediately(parentId, name) {
                var e = entry(for: item)
                var fi = fi
                fi.fh = handle
                req.reply { fuse_reply_create($0, &e, &fi) }
                return
            }
        } catch {
            log.info("create \(parentId.child(name)): \(error)")
            return req.fail(error)
        }
        deadline(req, "create")
        Task {
            do {
                let (item, handle) = try await domain.create(parentId, name, exclusive: exclusive)
                var e = entry(for: item)
                var fi = fi
                fi.fh = handle
                // Answered already (the deadline): the kernel has neither the handle nor the entry.
                if !req.reply({ fuse_reply_create($0, &e, &fi) }) {
                    domain.closeFile(handle)
                    inodes.forget(UInt64(e.ino), 1)
                }
            } catch {
                log.info("create \(parentId.child(name)): \(error)")
                req.fail(error)
            }
        }
    }

    func write(_ req: Request, _ buffer: UnsafeRawBufferPointer, _ offset: Int64, _ fh: UInt64) {
        // Into a file made by a server-side copy: its content is fetched first (see Bridge+Copy).
        if domain.needsContentBeforeWriting(handle: fh) { return writeAfterFetching(req, Data(buffer), offset, fh) }
        do {
            let n = try domain.write(handle: fh, offset: offset, buffer)
            req.reply { fuse_reply_write($0, n) }
        } catch {
            log.warning("write: \(error)")
            req.fail(error)
        }
    }

    func fsync(_ req: Request, _ fh: UInt64) {
        deadline(req, "fsync")
        Task {
            do {
                try await domain.sync(handle: fh)
                req.ok()
            } catch {
                log.warning("fsync: \(error)")
                req.fail(error)
            }
        }
    }

    /// fsync of a folder: names changed here that live in the journal (files not uploaded
    /// yet) made to survive a power cut. A read-only mount changes nothing.
    func fsyncdir(_ req: Request) {
        guard domain.isWritable else { return req.ok() }
        deadline(req, "fsyncdir")
        Task {
            do {
                try await domain.syncFolder()
                req.ok()
            } catch {
                log.warning("fsync of a folder: \(error)")
                req.fail(error)
            }
        }
    }

    func setattr(_ req: Request, _ ino: UInt64, _ attr: stat, _ toSet: Int32, _ fh: UInt64?) {
        guard let id = inodes.identifier(ino) else { return req.fail(ENOENT) }
        if answeredEchoSetattr(req, id, ino) { return }
        let resize = favfs_set_attr_size(toSet) != 0
        let mtime = Self.requestedModified(attr, toSet)
        if !resize {
            // Modes, owners, atime (no remote keeps them) and a time for a file not yet
            // uploaded (kept for the upload): no network, answered here with no task to start
            // (`tar x` sends a time, a chown and a chmod for every file it makes).
            do {
                let needsRemote = try mtime.map { try domain.setModifiedImmediately(id, $0) == nil } ?? false
                if !needsRemote { return try replyAttr(req, id, ino, toSet) }
            } catch {
                log.info("setattr \(id): \(error)")
                return req.fail(error)
            }
        }
        deadline(req, "setattr")
        Task {
            do {
                if resize { _ = try await domain.setSize(id, Int64(attr.st_size), handle: fh) }
                if let mtime { _ = try await domain.setModified(id, mtime) }
                try replyAttr(req, id, ino, toSet)
            } catch {
                log.info("setattr \(id): \(error)")
                req.fail(error)
            }
        }
    }

    /// The modification time a setattr asks for, if any.
    private static func requestedModified(_ attr: stat, _ toSet: Int32) -> Timestamp? {
        if favfs_set_attr_mtime_now(toSet) != 0 {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            return Timestamp(seconds: Int64(now.tv_sec), nanoseconds: Int32(now.tv_nsec))
        }
        guard favfs_set_attr_mtime(toSet) != 0 else { return nil }
        return Timestamp(seconds: Int64(attr.st_mtim.tv_sec), nanoseconds: Int32(attr.st_mtim.tv_nsec))
    }

    /// The attributes after a setattr. Modes and owners are not kept by remotes (see docs/behaviour.md):
    /// accepted, unchanged, except on a read-only mount.
    private func replyAttr(_ req: Request, _ id: ItemIdentifier, _ ino: UInt64, _ toSet: Int32) throws {
        if (favfs_set_attr_mode(toSet) != 0 || favfs_set_attr_owner(toSet) != 0) && !domain.isWritable {
            throw ProviderError(.readOnly, detail: "read-only mount")
        }
        guard let item = domain.cachedItem(id) else { throw ProviderError(.notFound, path: id.rawValue, detail: "gone") }
        var st = stat(of: item, as: id, inode: ino)
        req.reply { fuse_reply_attr($0, &st, options.attrTimeout) }
    }

    func mkdir(_ req: Request, _ parent: UInt64, _ name: String) {
        guard let parentId = inodes.identifier(parent) else { return req.fail(ENOENT) }
        if answeredEchoCreate(req, parentId.child(name)) { return }
        deadline(req, "mkdir")
        Task {
            do {
                var e = entry(for: try await domain.makeFolder(parentId, name))
                req.reply { fuse_reply_entry($0, &e) }
            } catch {
                log.info("mkdir \(parentId.child(name)): \(error)")
                req.fail(error)
            }
        }
    }

    func symlink(_ req: Request, _ target: String, _ parent: UInt64, _ name: String) {
        guard let parentId = inodes.identifier(parent) else { return req.fail(ENOENT) }
        if answeredEchoCreate(req, parentId.child(name)) { return }
        deadline(req, "symlink")
        Task {
            do {
                var e = entry(for: try await domain.makeSymlink(parentId, name, target: target))
                req.reply { fuse_reply_entry($0, &e) }
            } catch {
                log.info("symlink \(parentId.child(name)): \(error)")
                req.fail(error)
            }
        }
    }

    func unlink(_ req: Request, _ parent: UInt64, _ name: String, folder: Bool) {
        guard let parentId = inodes.identifier(parent) else { return req.fail(ENOENT) }
        if answeredEchoRemove(req, parentId.child(name)) { return }
        deadline(req, "unlink")
        Task {
            do {
                if folder { try await domain.removeFolder(parentId, name) } else { try await domain.remove(parentId, name) }
                // An open descriptor keeps the deleted file (POSIX) under its inode's new name.
                if let orphan = inodes.detach(parentId.child(name)), !folder { domain.adoptOrphan(orphan, was: parentId.child(name)) }
                req.ok()
            } catch {
                log.info("\(folder ? "rmdir" : "unlink") \(parentId.child(name)): \(error)")
                req.fail(error)
            }
        }
    }

    func rename(_ req: Request, _ parent: UInt64, _ name: String, _ newParent: UInt64, _ newName: String, _ flags: UInt32) {
        guard let from = inodes.identifier(parent), let to = inodes.identifier(newParent) else { return req.fail(ENOENT) }
        // RENAME_EXCHANGE (2) has no remote equivalent; RENAME_NOREPLACE (1) does.
        if flags & 2 != 0 { return req.fail(EINVAL) }
        deadline(req, "rename")
        Task {
            do {
                let (source, destination) = try await domain.rename(from, name, to: to, newName, noReplace: flags & 1 != 0)
                if let orphan = inodes.move(source, to: destination) { domain.adoptOrphan(orphan, was: destination) }
                req.ok()
            } catch {
                log.info("rename \(from.child(name)) -> \(to.child(newName)): \(error)")
                req.fail(error)
            }
        }
    }
}
