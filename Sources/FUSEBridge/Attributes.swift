import Foundation
import CFuse
import FavFSCore

/// Turns placeholders into `struct stat`.
struct Attributes: Sendable {
    let uid: uid_t
    let gid: gid_t
    /// See `FUSEMount.Options.umask`.
    var umask: mode_t? = nil

    func stat(of item: Item, inode: UInt64) -> stat {
        var st = Glibc.stat()
        st.st_ino = ino_t(inode)
        switch item.kind {
        case .folder: st.st_mode = S_IFDIR | (umask.map { 0o777 & ~$0 } ?? mode_t(item.permissions ?? 0o755))
        case .file: st.st_mode = S_IFREG | (umask.map { 0o666 & ~$0 } ?? mode_t(item.permissions ?? 0o644))
        case .symlink: st.st_mode = S_IFLNK | 0o777
        }
        // 1 for folders: "subfolder count unknown", so find does not skip by link count.
        st.st_nlink = 1
        st.st_uid = uid
        st.st_gid = gid
        // Sizes and times come from servers: never trust them to fit (2^63-1 + 511 traps).
        st.st_size = off_t(max(0, item.kind == .symlink ? Int64(item.symlinkTarget?.utf8.count ?? 0) : item.size))
        st.st_blksize = 1 << 20
        st.st_blocks = blkcnt_t(st.st_size / 512 + (st.st_size % 512 == 0 ? 0 : 1))
        let t = item.modifiedTime ?? Timestamp(seconds: 0)
        let ts = timespec(tv_sec: time_t(t.seconds), tv_nsec: Int(t.nanoseconds))
        st.st_mtim = ts
        st.st_atim = ts
        st.st_ctim = ts
        return st
    }
}
