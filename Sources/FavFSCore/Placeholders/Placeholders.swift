import Foundation
import Logging

/// The placeholders, what answers `stat` and `readdir` without the network: the loaded
/// folders in memory (`Namespace`, in `DomainState` behind `Domain.lock`, which it shares with
/// the dirty set) and every folder ever listed in the store. This part moves placeholders
/// between the two without holding the lock over SQLite (`preload`) and writes a changed one
/// to both (`setPlaceholder`). No network: listing is `Enumerations`'.
final class Placeholders: Sendable {
    let store: PlaceholderStore
    /// `Domain.lock`: the namespace in memory (and the dirty set beside it).
    let lock: Guarded<DomainState>
    /// Orphans (deleted while open) answer to their inode's name from here.
    let handles: HandleTable
    /// Serialises "write a placeholder to the store and to memory" against "persist what
    /// memory says" (`whileNoPlaceholderIsWritten`): without it a close persisting the
    /// memory's item could land after a newer item was stored but before memory had it, and
    /// the store kept the older one. Taken before `Domain.lock`, never inside it.
    private let writes = NSLock()

    init(store: PlaceholderStore, lock: Guarded<DomainState>, handles: HandleTable) {
        self.store = store
        self.lock = lock
        self.handles = handles
    }

    // MARK: reading

    /// The placeholder of `id`, from memory or the store; nil if never seen. No network.
    func cachedItem(_ id: ItemIdentifier) -> Item? {
        let known = id.rawValue.hasPrefix("//") || (id.parent.map(preload) ?? true)
        return lock.withLock { s in cachedItemLocked(&s, id, load: known) }
    }

    /// `cachedItem` with the lock held. `load`: false when `preload` just found the parent
    /// folder empty in the store (then memory alone answers).
    func cachedItemLocked(_ s: inout DomainState, _ id: ItemIdentifier, load: Bool = true) -> Item? {
        if id.isRoot { return s.namespace.root }
        if let orphan = handles.orphanItem(id) { return orphan }
        // The bridge names the inodes of deleted items "//…": never a path at the remote.
        if id.rawValue.hasPrefix("//") { return nil }
        guard let parent = id.parent else { return nil }
        return loadedState(&s, parent, load: load)?[id.name]
    }

    /// An item and whether it is dirty, read together (an upload commits both at once).
    func snapshot(_ id: ItemIdentifier) -> (item: Item?, dirty: Bool) {
        let known = id.rawValue.hasPrefix("//") || (id.parent.map(preload) ?? true)
        return lock.withLock { s in (cachedItemLocked(&s, id, load: known), s.dirty[id] != nil) }
    }

    /// The folder's state from memory (lock held). A folder not in memory yet is read from the
    /// store here only when `preload` did not bring it (a caller without it, or a folder
    /// dropped in between): under the lock, which every FUSE request waits for meanwhile.
    /// `load: false` (the caller's `preload` found nothing in the store) answers from memory alone.
    func loadedState(_ s: inout DomainState, _ folder: ItemIdentifier, load: Bool = true) -> FolderState? {
        if let loaded = s.namespace[folder] { return loaded }
        guard load else { return nil }
        let read = StoreWitness.allowing("a folder not preloaded") { try? store.listing(of: folder) }
        guard let (items, listedAt) = read else { return nil }
        return Self.install(&s, folder, items: items, listedAt: listedAt)
    }

    private static func install(_ s: inout DomainState, _ folder: ItemIdentifier, items: [Item], listedAt: Double?) -> FolderState? {
        guard listedAt != nil || !items.isEmpty else { return nil }
        let loaded = FolderState(folder: folder, items: items, listedAt: listedAt)
        s.namespace[folder] = loaded
        return loaded
    }

    /// Brings the folder's placeholders from the store into memory without the lock, so that
    /// the lock is never held while SQLite reads (a folder of 100,000 entries takes a while).
    /// The read is kept only if no store write landed meanwhile (the writer may have found the
    /// folder not in memory and left it at that); else it is read again, three times at most.
    /// False when the store knows nothing of the folder (never listed, no placeholders in it):
    /// then its memory, if any, answers alone.
    @discardableResult
    func preload(_ folder: ItemIdentifier) -> Bool {
        for _ in 0..<3 {
            if lock.withLock({ s in s.namespace[folder] != nil }) { return true }
            let writes = store.placeholderWrites
            guard let (items, listedAt) = try? store.listing(of: folder) else { return true }
            let done = lock.withLock { s -> Bool? in
                if s.namespace[folder] != nil { return true }
                guard store.placeholderWrites == writes else { return nil }
                return Self.install(&s, folder, items: items, listedAt: listedAt) != nil
            }
            if let done { return done }
        }
        return true
    }

    // MARK: writing

    /// Puts an item into its parent's listing (memory and, `persist`, the store).
    func setPlaceholder(_ item: Item, persist: Bool = true) {
        let item = item.modifiedTime == nil ? lock.withLock { s in withFirstSeenTimeLocked(&s, item) } : item
        writes.withLock {
            if persist { try? store.upsert(item) }
            guard let parent = item.parent else { lock.withLock { s in s.namespace.root = item }; return }
            preload(parent)
            lock.withLock { s in
                // In place: a copy of a 100,000-item listing per change would be 9 MB.
                _ = loadedState(&s, parent)
                s.namespace.put(item)
            }
        }
    }

    /// Runs `body` (which persists what memory says of an item) while no `setPlaceholder` is
    /// between its store write and its memory write.
    func whileNoPlaceholderIsWritten<T>(_ body: () throws -> T) rethrows -> T {
        try writes.withLock(body)
    }

    /// Forgets placeholders at and below `id` (it is gone at the remote).
    func forgetSubtree(_ id: ItemIdentifier) {
        try? store.removeSubtree(id)
        forgetNames(id)
    }

    /// `forgetSubtree`'s memory half, for a caller that deleted the rows in its own
    /// transaction (`PlaceholderStore.holdingWriter`) and committed it.
    func forgetNames(_ id: ItemIdentifier) {
        lock.withLock { s in s.namespace.removeName(id) }
    }

    // MARK: first-seen times

    /// Remotes that keep no modification times (Favart) would show 1970 for everything, and a
    /// freedesktop thumbnail whose `Thumb::MTime` is 0 counts as outdated for tumbler, which
    /// then downloads every image to make its own. An item the remote gives no time shows the
    /// time this cache dir first saw that version of it instead: kept with the placeholder,
    /// the same across listings and mounts, new when the content changes.
    static func withFirstSeenTime(_ item: Item, before: Item?, now: Double) -> Item {
        guard item.modifiedTime == nil else { return item }
        var item = item
        if let before, before.kind == item.kind, before.version == item.version, before.size == item.size || item.kind == .folder,
           let seen = before.modifiedTime {
            item.modifiedTime = seen
        } else {
            item.modifiedTime = Timestamp(seconds: Int64(now))
        }
        return item
    }

    /// `withFirstSeenTime` against the placeholder this mount has (lock held).
    func withFirstSeenTimeLocked(_ s: inout DomainState, _ item: Item) -> Item {
        guard item.modifiedTime == nil else { return item }
        return Self.withFirstSeenTime(item, before: cachedItemLocked(&s, item.identifier), now: Domain.now)
    }
}
