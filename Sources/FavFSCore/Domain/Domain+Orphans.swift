import Foundation

/// A file deleted or replaced here while open: POSIX keeps it usable through its descriptors
/// (`fstat`, `pread`, `pwrite`, `ftruncate`) until the last close. Its content is the cache
/// file those handles hold, made whole before the remote delete; it is never uploaded.
struct Orphan {
    var item: Item
    let entry: ContentEntry
}

extension Domain {
    /// Before `item` is deleted or replaced remotely: if a handle has it open, every byte of it
    /// is fetched first, so the open descriptors can still read all of it afterwards.
    func keepContentForOpenHandles(_ item: Item) async throws {
        guard item.kind == .file, let e = content.openEntry(item.identifier) else { return }
        let size = e.withLock { e.size }
        guard size > 0 else { return }
        try await content.provide(e, item: item, range: 0..<size, prefetch: nil, provider: provider)
    }

    /// After `id` was deleted or replaced here, the inode that named it is called `orphan`:
    /// the deleted content of its open handles answers to that name until the last close.
    public func adoptOrphan(_ orphan: ItemIdentifier, was id: ItemIdentifier) {
        lock.withLock {
            // Not one adopted before: an earlier file of the same name may still be open too.
            let adopted = orphans.values.map { ObjectIdentifier($0.entry) }
            guard let f = handles.values.first(where: { f in
                !adopted.contains(ObjectIdentifier(f.entry)) && f.entry.withLock { f.entry.deleted && f.entry.id == id }
            }) else { return }
            var item = f.item
            item.identifier = orphan
            orphans[orphan] = Orphan(item: item, entry: f.entry)
        }
    }

    /// The orphan's item as its handles see it (its size is the cache file's).
    func orphanItem(_ id: ItemIdentifier) -> Item? {
        lock.withLock {
            guard let o = orphans[id] else { return nil }
            var item = o.item
            item.size = o.entry.withLock { o.entry.size }
            return item
        }
    }

    /// utimensat on an orphan: kept with it, nothing is sent.
    func setOrphanModified(_ id: ItemIdentifier, _ time: Timestamp) -> Item? {
        lock.withLock {
            guard orphans[id] != nil else { return nil }
            orphans[id]!.item.modifiedTime = time
            return orphans[id]!.item
        }
    }

    /// At a close: the orphan of `entry` goes with its last handle.
    func dropOrphan(ifLastHandleOf entry: ContentEntry) {
        guard entry.withLock({ entry.deleted }) else { return }
        lock.withLock {
            guard !handles.values.contains(where: { $0.entry === entry }) else { return }
            for (id, o) in orphans where o.entry === entry { orphans[id] = nil }
        }
    }
}
