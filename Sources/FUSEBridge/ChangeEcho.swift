import Foundation
import CFuse
import CLinux
import FavFSCore
import Logging

/// Makes the kernel raise inotify events for changes found at the remote, so a file manager
/// watching a folder (GLib's directory monitor, KDirWatch) updates by itself.
///
/// FUSE's notifications only drop cached entries: the kernel calls `fsnotify` for operations
/// that go through the VFS, never for `notify_delete` or `notify_inval_*`. So this part performs
/// the matching operation on the mount point itself, from one thread of its own: `mknod`,
/// `mkdir` or `symlink` for a name that appeared (`IN_CREATE`), `unlink` or `rmdir` for one
/// that went (`IN_DELETE`), `utimensat` for a file that changed (`IN_ATTRIB`). The kernel sends
/// each such request with this thread's id as the caller's pid; the bridge recognises them
/// (`isEcho`) and answers from the change already made in the namespace, never touching the
/// remote or the namespace.
///
/// Only folders the kernel holds an inode of are echoed into (a watched folder always is).
/// A read-only mount has none (the kernel refuses with `EROFS` before asking). An echo that
/// fails (a name the user just took, a folder without write permission for this process) is
/// dropped: the notifier has told the kernel already, only the event is missing.
///
/// Lock order: `lock` is a leaf; no syscall on the mount and no call into another part is
/// made while it is held.
final class ChangeEcho: @unchecked Sendable {
    /// What the echo thread is doing to a name now; the bridge's lookup answers by it.
    enum Pending: Equatable {
        /// Created: a lookup answers "no such name", so the kernel goes on to create it.
        case added
        /// Removed: a lookup answers the item that was there, so the kernel goes on to delete it.
        case removed(folder: Bool)
    }

    private let mountpoint: String
    private let log = Logger(label: "favfs.fuse.echo")
    private let lock = NSCondition()
    private var queue: [RemoteChange] = []
    private var pending: [ItemIdentifier: Pending] = [:]
    private var running = false
    /// While paused (before an unmount), queued changes are dropped and none starts.
    private var paused = false
    private var busy = false
    /// The echo thread's id: the pid the kernel puts in its requests (0: no thread).
    private var threadId: pid_t = 0
    /// The namespace's answer for a name, with no network (nil: no such item now).
    private let currentItem: @Sendable (ItemIdentifier) -> Item?
    /// Whether the kernel holds an inode of this folder.
    private let kernelHolds: @Sendable (ItemIdentifier) -> Bool
    /// Hears each removal the echo could not make (the notifier then drops the entry itself).
    private let notMade: @Sendable (RemoteChange) -> Void

    init(mountpoint: String, currentItem: @escaping @Sendable (ItemIdentifier) -> Item?,
         kernelHolds: @escaping @Sendable (ItemIdentifier) -> Bool, notMade: @escaping @Sendable (RemoteChange) -> Void) {
        self.mountpoint = mountpoint.hasSuffix("/") ? String(mountpoint.dropLast()) : mountpoint
        self.currentItem = currentItem
        self.kernelHolds = kernelHolds
        self.notMade = notMade
    }

    /// Starts the thread.
    func start() {
        lock.withLock { running = true }
        let t = Thread { [self] in
            lock.withLock { threadId = favfs_gettid(); lock.broadcast() }
            loop()
        }
        t.name = "favfs-echo"
        t.start()
        lock.withLock { while threadId == 0 { lock.wait() } }
    }

    /// Ends the thread after the echo in progress, if any.
    func stop() {
        lock.withLock { running = false; queue = []; lock.broadcast() }
    }

    /// Lets the echo in progress finish (at most `seconds`) and starts no other until `resume`:
    /// an unmount finds no echo's syscall on the mount (it would fail with "busy").
    func pause(within seconds: TimeInterval = 10) {
        let dropped: [RemoteChange] = lock.withLock {
            paused = true
            defer { queue = [] }
            let deadline = Date().addingTimeInterval(seconds)
            while busy && lock.wait(until: deadline) {}
            return queue
        }
        for change in dropped { if case .removed = change { notMade(change) } }
    }

    func resume() { lock.withLock { paused = false } }

    /// Queues changes the notifier has told the kernel, but for removals, which are the
    /// echo's to make (any thread, returns at once). Removals not echoed go to `notMade`.
    func enqueue(_ changes: [RemoteChange]) {
        let dropped: [RemoteChange] = lock.withLock {
            guard running, !paused else { return changes }
            queue += changes
            lock.broadcast()
            return []
        }
        for change in dropped { if case .removed = change { notMade(change) } }
    }

    /// Whether a request comes from the echo thread.
    func isEcho(_ req: Request) -> Bool {
        let pid = fuse_req_ctx(req.raw).pointee.pid
        return lock.withLock { threadId != 0 && pid == threadId }
    }

    /// What the echo thread is doing to `id`, if anything.
    func pending(_ id: ItemIdentifier) -> Pending? { lock.withLock { pending[id] } }

    private func loop() {
        while true {
            let batch: [RemoteChange]? = lock.withLock {
                while running && (queue.isEmpty || paused) { lock.wait() }
                guard running else { return nil }
                defer { queue = [] }
                return queue
            }
            guard let batch else { return }
            for (i, change) in batch.enumerated() {
                // Paused or stopped meanwhile (an unmount): no echo starts; removals go to `notMade`.
                let go = lock.withLock { () -> Bool in
                    guard running, !paused else { return false }
                    busy = true
                    return true
                }
                guard go else {
                    for rest in batch[i...] { if case .removed = rest { notMade(rest) } }
                    break
                }
                let outcome = echo(change)
                lock.withLock { busy = false; lock.broadcast() }
                if outcome == .failed, case .removed = change { notMade(change) }
            }
        }
    }

    /// What became of one echo.
    enum Outcome: Equatable {
        case made
        /// Nothing to make: the name is back (made here, or listed again) — the kernel must not
        /// be told of a removal either, or it would drop the new item's entry and inode.
        case notNeeded
        /// Not made (for a removal, the notifier tells the kernel instead).
        case failed
    }

    /// Makes the change on the mount.
    @discardableResult
    private func echo(_ change: RemoteChange) -> Outcome {
        let id = change.identifier
        guard let parent = id.parent, kernelHolds(parent), let folder = Self.relativeFolder(of: id) else { return .failed }
        let name = id.name
        // Everything below happens relative to the mount's root, opened per echo (a descriptor
        // kept open would make every unmount fail as busy), and checked to be this mount's: the
        // echo never touches a file outside it, whatever a server names its items.
        let root = favfs_open_folder_path(mountpoint)
        guard root >= 0 else { log.debug("echo \(change): cannot open the mount point: \(String(cString: strerror(errno)))"); return .failed }
        defer { close(root) }
        guard favfs_is_fuse_root(root, UInt(InodeTable.root)) != 0 else { log.debug("echo \(change): \(mountpoint) is not this mount"); return .failed }
        let dir = favfs_open_folder_beneath(root, folder)
        guard dir >= 0 else { log.debug("echo \(change): cannot open \(parent): \(String(cString: strerror(errno)))"); return .failed }
        defer { close(dir) }

        var rc: Int32 = 0
        switch change {
        case .added:
            guard let item = currentItem(id) else { return .failed }
            lock.withLock { pending[id] = .added }
            switch item.kind {
            case .file: rc = mknodat(dir, name, S_IFREG | 0o644, 0)
            case .folder: rc = mkdirat(dir, name, 0o755)
            case .symlink: rc = symlinkat(item.symlinkTarget ?? "", dir, name)
            }
        case .removed(_, let folder):
            // The name is back (made here, or listed again) before the echo ran: no delete.
            guard currentItem(id) == nil else { return .notNeeded }
            lock.withLock { pending[id] = .removed(folder: folder) }
            rc = unlinkat(dir, name, folder ? AT_REMOVEDIR : 0)
        case .modified:
            guard let item = currentItem(id), item.kind != .symlink else { return .failed }
            // Both times: the kernel raises IN_ATTRIB (one alone raises IN_MODIFY or IN_ACCESS).
            let t = item.modifiedTime.map { timespec(tv_sec: Int($0.seconds), tv_nsec: Int($0.nanoseconds)) }
                ?? timespec(tv_sec: 0, tv_nsec: favfs_utime_now())
            rc = [t, t].withUnsafeBufferPointer { utimensat(dir, name, $0.baseAddress, AT_SYMLINK_NOFOLLOW) }
        }
        let err = rc == 0 ? 0 : errno
        lock.withLock { pending[id] = nil }
        log.debug("echo \(change)\(err == 0 ? "" : ": \(String(cString: strerror(err)))")")
        if rc == 0 { return .made }
        // The bridge refuses a removal whose name came back between the check above and the
        // unlink (`answeredEchoRemove`).
        if case .removed = change, err == EBUSY { return .notNeeded }
        return .failed
    }

    /// The folder of `id` relative to the mount's root ("." for the root), or nil when a
    /// component could not be one name in a path (empty, ".", "..", a NUL).
    static func relativeFolder(of id: ItemIdentifier) -> String? {
        let components = id.rawValue.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard !components.isEmpty, components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("\0") }) else { return nil }
        let folder = components.dropLast().joined(separator: "/")
        return folder.isEmpty ? "." : folder
    }
}
