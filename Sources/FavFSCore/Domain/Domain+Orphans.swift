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
        handles.adoptOrphan(orphan, was: id)
    }

    /// The orphan's item as its handles see it (its size is the cache file's).
    func orphanItem(_ id: ItemIdentifier) -> Item? { handles.orphanItem(id) }

    /// utimensat on an orphan: kept with it, nothing is sent.
    func setOrphanModified(_ id: ItemIdentifier, _ time: Timestamp) -> Item? { handles.setOrphanModified(id, time) }

    /// At a close: the orphan of `entry` goes with its last handle.
    func dropOrphan(ifLastHandleOf entry: ContentEntry) {
        guard entry.withLock({ entry.deleted }) else { return }
        handles.dropOrphan(ifLastHandleOf: entry)
    }
}
