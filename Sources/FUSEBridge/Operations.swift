import Foundation
import CFuse
import FavFSCore

/// The Bridge behind a request (the userdata given to fuse_session_new).
@inline(__always)
private func bridge(_ req: fuse_req_t?) -> Bridge {
    Unmanaged<Bridge>.fromOpaque(fuse_req_userdata(req)!).takeUnretainedValue()
}

private func name(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }

/// Names longer than NAME_MAX (255 bytes, what statfs reports) are refused with ENAMETOOLONG
/// before any work: the kernel lets FUSE names up to 1024 bytes through.
private func tooLong(_ req: fuse_req_t?, _ names: UnsafePointer<CChar>?...) -> Bool {
    for n in names where n != nil && strlen(n!) > 255 {
        fuse_reply_err(req, ENAMETOOLONG)
        return true
    }
    return false
}

/// Builds the low-level operations table. Nonisolated and outside main.swift: top-level code
/// is MainActor-bound and would deadlock the loop. On a read-only mount the kernel answers
/// writes with EROFS itself (mount option ro) and the Domain refuses the rest.
func makeOperations(extendedAttributes: Bool = true) -> fuse_lowlevel_ops {
    var ops = fuse_lowlevel_ops()
    ops.`init` = { userdata, conn in
        let b = Unmanaged<Bridge>.fromOpaque(userdata!).takeUnretainedValue()
        favfs_conn_configure(conn, b.options.maxReadahead, b.options.maxBackground, b.options.maxRead)
    }
    ops.lookup = { req, parent, n in if tooLong(req, n) { return }; bridge(req).lookup(Request(raw: req!), UInt64(parent), name(n)) }
    ops.forget = { req, ino, nlookup in
        bridge(req).forget(UInt64(ino), nlookup)
        fuse_reply_none(req)
    }
    ops.forget_multi = { req, count, forgets in
        let b = bridge(req)
        for i in 0..<count { b.forget(UInt64(forgets![i].ino), forgets![i].nlookup) }
        fuse_reply_none(req)
    }
    ops.getattr = { req, ino, _ in bridge(req).getattr(Request(raw: req!), UInt64(ino)) }
    ops.readlink = { req, ino in bridge(req).readlink(Request(raw: req!), UInt64(ino)) }
    ops.opendir = { req, ino, fi in bridge(req).opendir(Request(raw: req!), UInt64(ino), fi!.pointee) }
    ops.readdir = { req, ino, size, off, fi in
        bridge(req).readdir(Request(raw: req!), UInt64(ino), size, Int64(off), fi!.pointee.fh, plus: false)
    }
    ops.readdirplus = { req, ino, size, off, fi in
        bridge(req).readdir(Request(raw: req!), UInt64(ino), size, Int64(off), fi!.pointee.fh, plus: true)
    }
    ops.releasedir = { req, _, fi in bridge(req).releasedir(Request(raw: req!), fi!.pointee.fh) }
    ops.fsyncdir = { req, _, _, _ in bridge(req).fsyncdir(Request(raw: req!)) }
    ops.open = { req, ino, fi in bridge(req).open(Request(raw: req!), UInt64(ino), fi!.pointee) }
    ops.read = { req, ino, size, off, fi in bridge(req).read(Request(raw: req!), UInt64(ino), size, Int64(off), fi!.pointee.fh) }
    // No flush: there is nothing to do at close(2) that release does not do, and without the
    // operation libfuse answers the first FLUSH with ENOSYS, after which the kernel sends none.
    // Every close of a written file was a round trip the writer waited for (release is not).
    ops.release = { req, _, fi in bridge(req).release(Request(raw: req!), fi!.pointee.fh) }
    ops.statfs = { req, _ in bridge(req).statfs(Request(raw: req!)) }
    // Extended attributes: favfs's state (user.favfs.*); anything else ENODATA at once. Left
    // out (--no-xattrs), libfuse answers ENOSYS once and the kernel stops asking.
    if extendedAttributes { addExtendedAttributes(&ops) }

    ops.create = { req, parent, n, _, fi in if tooLong(req, n) { return }; bridge(req).create(Request(raw: req!), UInt64(parent), name(n), fi!.pointee) }
    ops.write = { req, _, buf, size, off, fi in
        bridge(req).write(Request(raw: req!), UnsafeRawBufferPointer(start: buf, count: size), Int64(off), fi!.pointee.fh)
    }
    ops.fsync = { req, _, _, fi in bridge(req).fsync(Request(raw: req!), fi!.pointee.fh) }
    ops.setattr = { req, ino, attr, toSet, fi in
        bridge(req).setattr(Request(raw: req!), UInt64(ino), attr!.pointee, toSet, fi.map { $0.pointee.fh })
    }
    ops.mkdir = { req, parent, n, _ in if tooLong(req, n) { return }; bridge(req).mkdir(Request(raw: req!), UInt64(parent), name(n)) }
    ops.symlink = { req, target, parent, n in if tooLong(req, n) { return }; bridge(req).symlink(Request(raw: req!), name(target), UInt64(parent), name(n)) }
    ops.unlink = { req, parent, n in if tooLong(req, n) { return }; bridge(req).unlink(Request(raw: req!), UInt64(parent), name(n), folder: false) }
    ops.rmdir = { req, parent, n in if tooLong(req, n) { return }; bridge(req).unlink(Request(raw: req!), UInt64(parent), name(n), folder: true) }
    ops.rename = { req, parent, n, newParent, newName, flags in
        if tooLong(req, n, newName) { return }
        bridge(req).rename(Request(raw: req!), UInt64(parent), name(n), UInt64(newParent), name(newName), flags)
    }
    // No remote has these: the right errno, never a silent no-op.
    // Only the echo of a file made at the remote (ChangeEcho); a program's mknod is refused.
    ops.mknod = { req, parent, n, _, _ in if tooLong(req, n) { return }; bridge(req).mknod(Request(raw: req!), UInt64(parent), name(n)) }
    ops.link = { req, _, _, _ in fuse_reply_err(req, EPERM) }
    ops.fallocate = { req, _, _, _, _, _ in fuse_reply_err(req, EOPNOTSUPP) }
    ops.copy_file_range = { req, _, offIn, fiIn, _, offOut, fiOut, len, flags in
        bridge(req).copyFileRange(Request(raw: req!), Int64(offIn), fiIn!.pointee.fh, Int64(offOut), fiOut!.pointee.fh, len, flags)
    }
    return ops
}

private func addExtendedAttributes(_ ops: inout fuse_lowlevel_ops) {
    ops.getxattr = { req, ino, n, size in bridge(req).getxattr(Request(raw: req!), UInt64(ino), name(n), size) }
    ops.listxattr = { req, ino, size in bridge(req).listxattr(Request(raw: req!), UInt64(ino), size) }
    ops.setxattr = { req, ino, n, value, size, flags in
        let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
        bridge(req).setxattr(Request(raw: req!), UInt64(ino), name(n), bytes, flags)
    }
    ops.removexattr = { req, ino, n in bridge(req).removexattr(Request(raw: req!), UInt64(ino), name(n)) }
}
