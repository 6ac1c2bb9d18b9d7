import Foundation
import CFuse
import FavFSCore

/// The Bridge behind a request (the userdata given to fuse_session_new).
@inline(__always)
private func bridge(_ req: fuse_req_t?) -> Bridge {
    Unmanaged<Bridge>.fromOpaque(fuse_req_userdata(req)!).takeUnretainedValue()
}

private func name(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }

/// Builds the low-level operations table. Nonisolated and outside main.swift: top-level code
/// is MainActor-bound and would deadlock the loop. Every write-side operation answers EROFS.
func makeOperations() -> fuse_lowlevel_ops {
    var ops = fuse_lowlevel_ops()
    ops.`init` = { userdata, conn in
        let b = Unmanaged<Bridge>.fromOpaque(userdata!).takeUnretainedValue()
        favfs_conn_configure(conn, b.options.maxReadahead, b.options.maxBackground)
    }
    ops.lookup = { req, parent, n in bridge(req).lookup(Request(raw: req!), UInt64(parent), name(n)) }
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
    ops.fsyncdir = { req, _, _, _ in fuse_reply_err(req, 0) }
    ops.open = { req, ino, fi in bridge(req).open(Request(raw: req!), UInt64(ino), fi!.pointee) }
    ops.read = { req, _, size, off, fi in bridge(req).read(Request(raw: req!), size, Int64(off), fi!.pointee.fh) }
    ops.flush = { req, _, _ in fuse_reply_err(req, 0) }
    ops.fsync = { req, _, _, _ in fuse_reply_err(req, 0) }
    ops.release = { req, _, fi in bridge(req).release(Request(raw: req!), fi!.pointee.fh) }
    ops.statfs = { req, _ in bridge(req).statfs(Request(raw: req!)) }
    ops.getxattr = { req, ino, n, size in bridge(req).getxattr(Request(raw: req!), UInt64(ino), name(n), size) }
    ops.listxattr = { req, _, size in bridge(req).listxattr(Request(raw: req!), size) }

    // Read-only mount: the kernel refuses most writes itself (mount option ro); these answer
    // the rest explicitly rather than with ENOSYS.
    ops.setattr = { req, _, _, _, _ in fuse_reply_err(req, EROFS) }
    ops.mknod = { req, _, _, _, _ in fuse_reply_err(req, EROFS) }
    ops.mkdir = { req, _, _, _ in fuse_reply_err(req, EROFS) }
    ops.unlink = { req, _, _ in fuse_reply_err(req, EROFS) }
    ops.rmdir = { req, _, _ in fuse_reply_err(req, EROFS) }
    ops.symlink = { req, _, _, _ in fuse_reply_err(req, EROFS) }
    ops.rename = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
    ops.link = { req, _, _, _ in fuse_reply_err(req, EROFS) }
    ops.write = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
    ops.create = { req, _, _, _, _ in fuse_reply_err(req, EROFS) }
    ops.setxattr = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
    ops.removexattr = { req, _, _ in fuse_reply_err(req, EROFS) }
    ops.fallocate = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
    return ops
}
