import Foundation
import CFuse
import FavFSCore

/// Extended attributes: favfs's own (`user.favfs.*`, see `ItemStatus`), answered on the
/// worker thread from memory. The kernel asks for `security.capability` before every write and
/// for a SELinux label and ACLs on `ls -l`: everything outside `user.favfs.` is answered at once,
/// before any lookup (`security.*`/`system.*` ENOTSUP, other `user.*` ENODATA).
extension Bridge {
    static let ownPrefix = "user.favfs."

    func getxattr(_ req: Request, _ ino: UInt64, _ name: String, _ size: Int) {
        guard name.hasPrefix(Self.ownPrefix) else { return req.fail(Self.foreignNamespace(name) ? ENOTSUP : ENODATA) }
        guard let id = inodes.identifier(ino) else { return req.fail(ENOENT) }
        guard let value = domain.extendedAttribute(name, of: id) else { return req.fail(ENODATA) }
        replyXattr(req, Array(value.utf8), size)
    }

    func listxattr(_ req: Request, _ ino: UInt64, _ size: Int) {
        guard let id = inodes.identifier(ino), let names = domain.extendedAttributeNames(of: id) else { return req.fail(ENOENT) }
        replyXattr(req, names.flatMap { Array($0.utf8) + [0] }, size)
    }

    func setxattr(_ req: Request, _ ino: UInt64, _ name: String, _ value: [UInt8], _ flags: Int32) {
        guard name == Domain.pinAttribute else {
            // Our state attributes are read-only; other names have nowhere to go on any remote.
            return req.fail(name.hasPrefix(Self.ownPrefix) ? EPERM : ENOTSUP)
        }
        let text = String(decoding: value, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text == "1" || text == "0" else { return req.fail(EINVAL) }
        if flags & 0x1 != 0 { return req.fail(EEXIST) }   // XATTR_CREATE: it always exists
        setPinned(req, ino, text == "1")
    }

    func removexattr(_ req: Request, _ ino: UInt64, _ name: String) {
        guard name == Domain.pinAttribute else {
            return req.fail(name.hasPrefix(Self.ownPrefix) ? EPERM : Self.foreignNamespace(name) ? ENOTSUP : ENODATA)
        }
        setPinned(req, ino, false)
    }

    private func setPinned(_ req: Request, _ ino: UInt64, _ pinned: Bool) {
        guard let id = inodes.identifier(ino) else { return req.fail(ENOENT) }
        deadline(req, "setxattr")
        Task {
            do {
                try await domain.setPinned(id, pinned)
                req.ok()
            } catch {
                log.info("setxattr \(Domain.pinAttribute) on \(id): \(error)")
                req.fail(error)
            }
        }
    }

    /// The size-probe protocol: size 0 asks for the length; a buffer too small is ERANGE.
    private func replyXattr(_ req: Request, _ bytes: [UInt8], _ size: Int) {
        if size == 0 { req.reply { fuse_reply_xattr($0, bytes.count) }; return }
        guard bytes.count <= size else { return req.fail(ERANGE) }
        bytes.withUnsafeBufferPointer { buf in
            _ = req.reply { fuse_reply_buf($0, UnsafeRawPointer(buf.baseAddress).map { $0.assumingMemoryBound(to: CChar.self) }, bytes.count) }
        }
    }
}

extension Bridge {
    /// Namespaces no remote can hold (`security.*`, `system.*`). Reading them is `ENOTSUP`, not
    /// `ENODATA`: `ls -l` then stops asking for the SELinux label of every later file on the
    /// mount (coreutils remembers a device that does not support it), one round trip per file.
    static func foreignNamespace(_ name: String) -> Bool {
        name.hasPrefix("security.") || name.hasPrefix("system.")
    }
}
