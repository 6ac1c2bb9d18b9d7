import Foundation
import CFuse
import FavFSCore

/// The bridge's answers to the echo thread's requests (see `ChangeEcho`): the change happened at
/// the remote and is in the namespace already, so each is answered from there, with no network
/// and nothing changed. Each returns false for any other request.
extension Bridge {
    /// A lookup on the echo's way to the name it creates or deletes.
    func answeredEchoLookup(_ req: Request, _ id: ItemIdentifier) -> Bool {
        guard let echo, let pending = echo.pending(id), echo.isEcho(req) else { return false }
        log.debug("echo lookup \(id): \(pending)")
        switch pending {
        case .added:
            // Absent and not cached (entry_timeout 0): the kernel goes on to create it.
            var e = fuse_entry_param()
            req.reply { fuse_reply_entry($0, &e) }
        case .removed(let folder):
            // The item that was there, so the kernel goes on to delete it.
            replyEntry(req, Item(identifier: id, kind: folder ? .folder : .file))
        }
        return true
    }

    /// `mknod`, `mkdir`, `symlink`: the item the remote has now.
    func answeredEchoCreate(_ req: Request, _ id: ItemIdentifier) -> Bool {
        guard let echo, echo.isEcho(req) else { return false }
        if let item = domain.cachedItem(id) { replyEntry(req, item) } else { req.fail(ENOENT) }
        return true
    }

    /// `unlink`, `rmdir`: the name no longer leads to its inode. A name back in the namespace
    /// meanwhile is refused, so the kernel keeps its entry.
    func answeredEchoRemove(_ req: Request, _ id: ItemIdentifier) -> Bool {
        guard let echo, echo.isEcho(req) else { return false }
        if domain.cachedItem(id) != nil { req.fail(EBUSY); return true }
        inodes.detach(id)
        req.ok()
        return true
    }

    /// `utimensat`: the attributes the remote's item has now.
    func answeredEchoSetattr(_ req: Request, _ id: ItemIdentifier, _ ino: UInt64) -> Bool {
        guard let echo, echo.isEcho(req) else { return false }
        guard let item = domain.cachedItem(id) else { req.fail(ENOENT); return true }
        var st = stat(of: item, as: id, inode: ino)
        req.reply { fuse_reply_attr($0, &st, options.attrTimeout) }
        return true
    }

    /// Programs cannot make device nodes or FIFOs here; only the echo's `mknod` of a file the
    /// remote made is answered.
    func mknod(_ req: Request, _ parent: UInt64, _ name: String) {
        guard let parentId = inodes.identifier(parent) else { return req.fail(ENOENT) }
        if answeredEchoCreate(req, parentId.child(name)) { return }
        req.fail(EPERM)
    }
}
