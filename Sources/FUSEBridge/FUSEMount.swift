import Foundation
import CFuse
import FavFSCore
import Logging

/// A FUSE mount of one Domain: creates the session, mounts, runs the multithreaded loop.
public final class FUSEMount: @unchecked Sendable {
    public struct Options: Sendable {
        public var mountpoint: String
        /// Shown in the mount table (`favfs:dav://host/path`).
        public var fsName: String
        public var readOnly = true
        public var entryTimeout: Double = 1
        public var attrTimeout: Double = 1
        public var uid: uid_t = getuid()
        public var gid: gid_t = getgid()
        public var maxThreads: UInt32 = 8
        public var maxReadahead: UInt32 = 1 << 20
        /// The largest read the kernel sends: one that a spliced reply still fits (see `spliceableReadSize`).
        public var maxRead: UInt32 = FUSEMount.spliceableReadSize()
        public var maxBackground: UInt32 = 64
        /// Lets other users (and root) into the mount; the kernel still checks the modes
        /// (`default_permissions`). A plain user needs `user_allow_other` in /etc/fuse.conf.
        public var allowOther = false
        /// mount(8)'s per-mount flags: `noexec`, `nosuid`, `nodev` (or `exec`, `suid`, `dev`).
        public var kernelFlags: [String] = []
        /// Answer extended attributes (`user.favfs.*`). Without them the kernel stops asking
        /// after the first ENOSYS (no `security.capability` round trip per write).
        public var extendedAttributes = true
        /// Permission bits taken away from what `stat` reports (files 0666, folders 0777 before
        /// it); nil: the remote's modes, or 0644/0755 where it has none.
        public var umask: mode_t?
        /// Seconds a request that waits on the network may take before it is answered
        /// `ETIMEDOUT` (0: no limit). The work goes on in the background.
        public var requestTimeout: Double = 30
        public var debug = false
        public init(mountpoint: String, fsName: String) { self.mountpoint = mountpoint; self.fsName = fsName }
    }

    public struct MountError: Error, CustomStringConvertible {
        public let description: String
    }

    private let bridge: Bridge
    private var session: OpaquePointer?
    private var ops: fuse_lowlevel_ops
    private let log = Logger(label: "favfs.fuse")

    public init(domain: Domain, options: Options) {
        bridge = Bridge(domain: domain, options: options)
        ops = makeOperations(extendedAttributes: options.extendedAttributes)
    }

    /// What stands in the way of a FUSE mount, in words (libfuse prints its reason on stderr,
    /// which a daemon's log has, not the terminal).
    static func whyMountFailed() -> String {
        var st = stat()
        guard stat("/dev/fuse", &st) == 0 else {
            return "/dev/fuse does not exist (load the fuse module: modprobe fuse; in a container, pass the device in)"
        }
        if access("/dev/fuse", R_OK | W_OK) != 0 {
            let mode = String(st.st_mode & 0o777, radix: 8)
            return "cannot open /dev/fuse: \(String(cString: strerror(errno))) (its mode is 0\(mode); Debian makes it 0666 — ask root to run 'chmod 0666 /dev/fuse')"
        }
        if getuid() != 0 && !["/usr/bin/fusermount3", "/bin/fusermount3"].contains(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            return "fusermount3 is missing, and a user other than root needs it to mount (apt install fuse3)"
        }
        return "the kernel or fusermount3 refused (its reason is in the log above: is the mount point an empty folder you own, not already mounted?)"
    }

    /// Creates the session and mounts it. The mount answers once `run()` is looping.
    public func mount() throws {
        let o = bridge.options
        var mountOptions = ["fsname=\(o.fsName.replacingOccurrences(of: ",", with: "_"))", "subtype=favfs",
                            "default_permissions", "noatime", "max_read=\(o.maxRead)"]
        if o.readOnly { mountOptions.append("ro") }
        if o.allowOther { mountOptions.append("allow_other") }
        mountOptions += o.kernelFlags
        var argv = ["favfs", "-o", mountOptions.joined(separator: ",")]
        if o.debug { argv.append("-d") }
        let cargs = argv.map { strdup($0) }
        defer { cargs.forEach { free($0) } }
        var cptrs: [UnsafeMutablePointer<CChar>?] = cargs + [nil]
        let se: OpaquePointer? = cptrs.withUnsafeMutableBufferPointer { buf in
            var args = favfs_args_init(Int32(argv.count), buf.baseAddress)
            defer { fuse_opt_free_args(&args) }
            return fuse_session_new(&args, &ops, MemoryLayout<fuse_lowlevel_ops>.size,
                                    Unmanaged.passUnretained(bridge).toOpaque())
        }
        guard let se else { throw MountError(description: "cannot create the FUSE session (bad mount options?)") }
        guard fuse_session_mount(se, o.mountpoint) == 0 else {
            fuse_session_destroy(se)
            throw MountError(description: "cannot mount on \(o.mountpoint): \(Self.whyMountFailed())")
        }
        if !SessionIO.install(on: se) {
            log.warning("cannot take over the FUSE session's I/O: the kernel asks for security.capability before each write")
        }
        session = se
        let notifier = bridge.notifier
        notifier.start(session: se)
        bridge.echo?.start()
        bridge.domain.remoteChanges.subscribe { notifier.enqueue($0) }
    }

    /// Before an unmount: the echo of remote changes (`ChangeEcho`) finishes what it is doing and
    /// starts nothing more, so no syscall of this process keeps the mount busy.
    public func prepareForUnmount() { bridge.echo?.pause() }

    /// The unmount did not happen: changes are echoed again.
    public func unmountCancelled() { bridge.echo?.resume() }

    /// The libfuse this binary runs with, e.g. "3.14.0".
    public static var libfuseVersion: String { String(cString: fuse_pkgversion()) }

    /// The largest power of two a reply to a read can have and still be spliced from the cache
    /// file into /dev/fuse. libfuse splices through a pipe that must hold the reply, its header
    /// and three pages of slack; a pipe grows to `/proc/sys/fs/pipe-max-size` (1 MiB by default).
    /// A 1 MiB read does not fit, and libfuse then falls back to a malloc'ed bounce buffer per
    /// read: an mmap, 256 zeroed page faults and a munmap every MiB, and glibc's heap grew with
    /// what was read (`dd bs=1M`: 1 GiB cold 286–433 → 516–749 MB/s, peak RSS 88–100 → 44 MiB).
    public static func spliceableReadSize(pipeMax: Int? = nil) -> UInt32 {
        let limit = pipeMax ?? (try? String(contentsOfFile: "/proc/sys/fs/pipe-max-size", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? (1 << 20)
        let slack = 4 * 4096
        var size = 1 << 20   // the kernel's largest FUSE request (256 pages)
        while size > 128 << 10 && size + slack > limit { size >>= 1 }
        return UInt32(size)
    }

    /// Serves requests until the filesystem is unmounted (`favfs unmount`, `fusermount3 -u`).
    /// Blocks the calling thread.
    public func run() -> Int32 {
        guard let session else { return -1 }
        let rc = favfs_session_loop_mt(session, bridge.options.maxThreads, 4)
        bridge.domain.remoteChanges.subscribe(nil)
        bridge.notifier.stop()
        bridge.echo?.stop()
        fuse_session_unmount(session)
        fuse_session_destroy(session)
        self.session = nil
        return rc
    }
}
