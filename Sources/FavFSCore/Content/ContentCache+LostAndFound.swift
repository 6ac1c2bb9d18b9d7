import Foundation

/// What goes to `lostAndFound`: content files no record names, and the content of uploads
/// that failed for good.
extension ContentCache {
    /// Content files no record names: an empty one (a crash between create and its first byte)
    /// is removed; any other may be the only copy of something written here (the database was
    /// deleted or damaged while it was dirty), so it is moved to `lostAndFound`, never deleted.
    /// Returns how many files were handled. Called at mount and at unmount.
    @discardableResult
    public func rescueUnknownFiles() -> Int {
        // Without the records, every file would look unknown: leave them all where they are.
        guard let records = try? store.contentByLastUse() else {
            log.error("cannot read the content records: content files are left where they are")
            return 0
        }
        return lostAndFound.rescueUnknownFiles(in: directoryPath, known: Set(records.map(\.file))) { name in
            table.withLock { t in t.entries.values.contains { $0.file == name } }
        }
    }

    /// Keeps the cache file of `id` in `lostAndFound` (`LostAndFound.keep`). Nil when it has
    /// none or it could not be kept (the caller must then keep the content where it is).
    func keepInLostAndFound(_ id: ItemIdentifier, independentCopy: Bool = false) -> URL? {
        guard let r = try? store.contentRecord(id) else { return nil }
        return lostAndFound.keep(path(r.file), of: id, independentCopy: independentCopy)
    }
}
