import CFuse
import CLinux
import Glibc
import Synchronization

/// The session's reads and writes of /dev/fuse (libfuse's custom I/O), done as libfuse would do
/// them, for one thing libfuse 3.14 cannot ask for: `FUSE_HANDLE_KILLPRIV_V2` (kernel 5.11+).
///
/// Without it the kernel sets no `S_NOSEC` on a FUSE inode, and before every `write(2)` asks
/// the daemon for `security.capability` (a `GETXATTR` round trip per write). With it the
/// kernel asks once per inode, and again after the inode's attributes are refreshed. What the flag
/// promises — the file system clears setuid, setgid and capabilities on write, truncate and
/// chown — holds here with nothing to do: no remote keeps a mode set through the mount (a
/// chmod is accepted and changes nothing) nor a `security.*` attribute, and libfuse already
/// answers for the older `FUSE_HANDLE_KILLPRIV`, which promises the same.
///
/// The kernel's INIT request is seen on its way in (`read`), and the flag added to its reply
/// (`writev`) when the kernel offered it; every other message passes through untouched.
enum SessionIO {
    static let handleKillprivV2: UInt32 = 1 << 28
    private static let initOpcode: UInt32 = 26
    /// `fuse_in_header` is 40 bytes; `fuse_init_in.flags` follows `major`, `minor`, `max_readahead`.
    private static let initInFlagsOffset = 40 + 12
    /// `fuse_out_header` is 16 bytes; `fuse_init_out.flags` is at 12 in the reply's argument.
    private static let initOutFlagsOffset = 12

    /// INIT requests read and not answered yet, by descriptor: the request's id, and whether
    /// the kernel offered the flag.
    private static let pendingInits = Mutex<[Int32: (unique: UInt64, offered: Bool)]>([:])
    /// Whether `pendingInits` may hold one: every other reply passes without taking its lock.
    private static let anyPending = Atomic<Bool>(false)

    /// Takes over the session's I/O on its /dev/fuse descriptor (after `fuse_session_mount`).
    static func install(on session: OpaquePointer) -> Bool {
        var io = fuse_custom_io()
        io.read = { fd, buffer, length, _ in
            let n = Glibc.read(fd, buffer, length)
            if n >= SessionIO.initInFlagsOffset + 4, let buffer { SessionIO.noteRequest(fd, UnsafeRawPointer(buffer)) }
            return n
        }
        io.writev = { fd, iov, count, _ in SessionIO.writeReply(fd, iov, count) }
        io.splice_receive = { fdIn, offIn, fdOut, offOut, length, flags, _ in
            favfs_splice(fdIn, offIn, fdOut, offOut, length, flags)
        }
        io.splice_send = { fdIn, offIn, fdOut, offOut, length, flags, _ in
            favfs_splice(fdIn, offIn, fdOut, offOut, length, flags)
        }
        return fuse_session_custom_io(session, &io, fuse_session_fd(session)) == 0
    }

    /// Notes an INIT request read from `fd` (any other request is left alone).
    static func noteRequest(_ fd: Int32, _ request: UnsafeRawPointer) {
        guard request.loadUnaligned(fromByteOffset: 4, as: UInt32.self) == initOpcode else { return }
        let unique = request.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        let flags = request.loadUnaligned(fromByteOffset: initInFlagsOffset, as: UInt32.self)
        pendingInits.withLock { $0[fd] = (unique, flags & handleKillprivV2 != 0) }
        anyPending.store(true, ordering: .sequentiallyConsistent)
    }

    /// Writes a reply to `fd` as `writev(2)` would, the INIT reply with the flag added where the
    /// kernel offered it. libfuse reads `errno` after a failed write: it is the write's.
    static func writeReply(_ fd: Int32, _ iov: UnsafeMutablePointer<iovec>?, _ count: Int32) -> Int {
        guard anyPending.load(ordering: .sequentiallyConsistent), let iov, count == 2, iov[0].iov_len == 16, let header = iov[0].iov_base,
              iov[1].iov_len >= initOutFlagsOffset + 4, let argument = iov[1].iov_base,
              let pending = pendingInits.withLock({ $0[fd] }),
              header.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == pending.unique
        else { return Glibc.writev(fd, iov, count) }
        pendingInits.withLock {
            $0[fd] = nil
            if $0.isEmpty { anyPending.store(false, ordering: .sequentiallyConsistent) }
        }
        guard pending.offered, header.loadUnaligned(fromByteOffset: 4, as: Int32.self) == 0 else { return Glibc.writev(fd, iov, count) }
        // The reply's argument is libfuse's: changed in a copy, written in its place.
        let length = iov[1].iov_len
        return withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { copy in
            copy.baseAddress!.copyMemory(from: argument, byteCount: length)
            let flags = copy.loadUnaligned(fromByteOffset: initOutFlagsOffset, as: UInt32.self)
            copy.storeBytes(of: flags | handleKillprivV2, toByteOffset: initOutFlagsOffset, as: UInt32.self)
            var parts = (iov[0], iovec(iov_base: copy.baseAddress, iov_len: length))
            return withUnsafeMutablePointer(to: &parts) {
                $0.withMemoryRebound(to: iovec.self, capacity: 2) { Glibc.writev(fd, $0, 2) }
            }
        }
    }
}
