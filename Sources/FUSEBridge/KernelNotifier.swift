import Foundation
import CFuse
import FavFSCore
import Logging

/// Tells the kernel about changes found at the remote, from one thread of its own: a notify
/// call can block until the kernel gets a lock that a request in flight holds, so it is never
/// made from a FUSE handler or from the cooperative pool. Only names and inodes the kernel
/// holds are mentioned; the rest it will look up fresh anyway.
///
/// - removed: on a writable mount, nothing here: `ChangeEcho` unlinks the name on the mount,
///   which drops the entry and raises inotify's `IN_DELETE` (a `notify_delete` first would leave
///   a cached "no such name" in its way). Read-only, or when the echo fails: `notify_delete`
///   (no event for the folder's watchers), and the inode loses its name, so a new item of
///   that name gets a new inode;
/// - added: `notify_inval_entry` (a cached "no such name" goes);
/// - modified: `notify_inval_inode` for attributes and every cached page (same size or not),
///   unless a reader that moved to the new version told the kernel already;
/// - and for names added or removed, the folder's attributes;
/// - and half a second later, each added or removed name's entry once more: a lookup the
///   kernel sent before the change and answered after the notification (the old answer) would
///   otherwise stay cached for the entry timeout.
final class KernelNotifier: @unchecked Sendable {
    private let inodes: InodeTable
    private let log = Logger(label: "favfs.fuse.notify")
    private let condition = NSCondition()
    /// Changes to tell, each with whether the echo may take it (false: it failed to).
    private var queue: [(change: RemoteChange, echo: Bool)] = []
    /// Names whose entries are invalidated again at `due` (guarded by `condition`).
    private var again: [(due: Date, parent: UInt64, name: String)] = []
    static let againAfter: TimeInterval = 0.5
    private var running = false
    /// The session and how many notify calls use it now (`withSession`): `stop` waits for
    /// them, so the session is never used after it ends. Not held across a notify call, which
    /// may block: a read's handler makes one too (`refreshAttributes`).
    private let sessionUse = NSCondition()
    private var session: OpaquePointer?
    private var sessionUsers = 0

    /// Hears each batch once the kernel has been told (nil: read-only mount).
    private let echo: ChangeEcho?

    /// The content version of an item's placeholder now (nil: not a file).
    private let currentVersion: @Sendable (ItemIdentifier) -> String?

    init(inodes: InodeTable, echo: ChangeEcho?, currentVersion: @escaping @Sendable (ItemIdentifier) -> String?) {
        self.inodes = inodes; self.echo = echo; self.currentVersion = currentVersion
    }

    /// Starts the thread, for a session that is mounted.
    func start(session se: OpaquePointer) {
        sessionUse.withLock { session = se }
        condition.withLock { running = true }
        let t = Thread { [self] in loop() }
        t.name = "favfs-notify"
        t.start()
    }

    /// Queues changes (any thread, returns at once); `echo: false` for removals the echo could
    /// not make, which the kernel is then told of here.
    func enqueue(_ changes: [RemoteChange], echo: Bool = true) {
        condition.withLock {
            guard running else { return }
            queue += changes.map { ($0, echo) }
            condition.signal()
        }
    }

    /// Ends the thread; no notify call runs once this returns. Call after the session loop ended.
    func stop() {
        condition.withLock { running = false; queue = []; again = []; condition.signal() }
        sessionUse.withLock {
            session = nil
            while sessionUsers > 0 { sessionUse.wait() }
        }
    }

    /// Runs `body` with the session unless it ended; `stop` waits for it.
    private func withSession(_ body: (OpaquePointer) -> Void) {
        let se: OpaquePointer? = sessionUse.withLock {
            if session != nil { sessionUsers += 1 }
            return session
        }
        guard let se else { return }
        defer { sessionUse.withLock { sessionUsers -= 1; sessionUse.broadcast() } }
        body(se)
    }

    /// Tells the kernel to ask for the attributes of `ino` again, now, on the caller's thread:
    /// before a read's reply that serves a newer, larger version of the file than the kernel
    /// knows. Attributes only (offset -1): no page is touched, so a handler may call it while
    /// its own request holds the page being read.
    func refreshAttributes(_ ino: UInt64) {
        withSession { se in
            let rc = fuse_lowlevel_notify_inval_inode(se, fuse_ino_t(ino), -1, 0)
            log.debug("inval_inode attributes (\(ino)): \(rc)")
        }
    }

    private func loop() {
        while true {
            let next: (batch: [(change: RemoteChange, echo: Bool)], late: [(parent: UInt64, name: String)])? = condition.withLock {
                while running && queue.isEmpty {
                    guard let first = again.map(\.due).min() else { condition.wait(); continue }
                    if first <= Date() { break }
                    _ = condition.wait(until: first)
                }
                guard running else { return nil }
                let now = Date()
                let late = again.filter { $0.due <= now }.map { (parent: $0.parent, name: $0.name) }
                again.removeAll { $0.due <= now }
                defer { queue = [] }
                return (queue, late)
            }
            guard let (batch, late) = next else { return }
            var named: [(parent: UInt64, name: String)] = []
            withSession { se in
                var folders = Set<UInt64>()
                for (change, echo) in batch {
                    if let parent = tell(se, change, echoed: echo && self.echo != nil) {
                        folders.insert(parent)
                        named.append((parent, change.identifier.name))
                    }
                }
                // The folders' own attributes (times, link counts) were computed before.
                for ino in folders { _ = fuse_lowlevel_notify_inval_inode(se, fuse_ino_t(ino), -1, 0) }
                for (parent, name) in late {
                    _ = name.withCString { fuse_lowlevel_notify_inval_entry(se, fuse_ino_t(parent), $0, strlen($0)) }
                }
            }
            // After the kernel dropped what it cached: the echo's lookups then come to the bridge.
            echo?.enqueue(batch.filter(\.echo).map(\.change))
            if !named.isEmpty {
                let due = Date().addingTimeInterval(Self.againAfter)
                condition.withLock { again += named.map { (due, $0.parent, $0.name) } }
            }
        }
    }

    /// Tells one change; returns the inode of the folder whose names changed, if the kernel has it.
    private func tell(_ se: OpaquePointer, _ change: RemoteChange, echoed: Bool) -> UInt64? {
        let id = change.identifier
        switch change {
        case .modified:
            guard let ino = inodes.existing(id) else { return nil }
            // A reader moved to this version told the kernel already (`refreshAttributes`):
            // telling it again could race the reader's getattr (see `Bridge.reply`).
            if let version = currentVersion(id), inodes.wasRefreshed(ino, to: version) {
                log.debug("inval_inode \(id) (\(ino)): told by its reader already")
                return nil
            }
            let rc = fuse_lowlevel_notify_inval_inode(se, fuse_ino_t(ino), 0, 0)
            log.debug("inval_inode \(id) (\(ino)): \(rc)")
            return nil
        case .added, .removed:
            guard let parentId = id.parent, let parent = inodes.existing(parentId) else { return nil }
            let name = id.name
            if case .removed = change, echoed { return parent }
            var deleted = false
            if case .removed = change, let child = inodes.existing(id) {
                let rc = name.withCString { fuse_lowlevel_notify_delete(se, fuse_ino_t(parent), fuse_ino_t(child), $0, strlen($0)) }
                log.debug("notify_delete \(id) (\(parent)/\(child)): \(rc)")
                deleted = rc == 0
                inodes.detach(id)
            }
            // An added name, a name without an inode, or one the kernel would not delete (a
            // folder it still holds children of): at least the cached entry goes.
            var rc: Int32 = 0
            if !deleted {
                rc = name.withCString { fuse_lowlevel_notify_inval_entry(se, fuse_ino_t(parent), $0, strlen($0)) }
            }
            log.debug("\(change): \(rc)")
            return parent
        }
    }
}
