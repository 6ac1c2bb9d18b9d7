import CLinux
import Foundation

/// The entry table's side of stopProviding: whether one item's content may go now, checked
/// under this cache's lock (`Eviction` decides what to free), and the deletion of a record and
/// its file outside it.
extension ContentCache {
    /// What `evictUnlessDirty` did with an item's content. `alreadyGoing`: another pass (or a
    /// removal) is deleting it right now; the space it frees is not this caller's to count
    /// (counted twice, a reader short of disk stopped evicting before enough was free).
    enum FreeingOutcome: Equatable { case evicted, open, downloading, notUploaded, alreadyGoing }

    /// Free up space for one item: drops its cached content unless a handle or a download uses
    /// it, or it is dirty (the only copy). Both are checked under this cache's lock, which a
    /// write needs first (`retain`): content found clean here cannot turn dirty before it goes.
    func evictUnlessDirty(_ r: ContentRecord) -> FreeingOutcome {
        let outcome = table.withLock { t -> FreeingOutcome in
            if let e = t.entries[r.id], let busy = e.withLock({ es in es.users > 0 ? es.openHandles > 0 : nil }) {
                return busy ? .open : .downloading
            }
            // Deleted meanwhile (`r` is from a list read before), or being deleted right now.
            if t.recordsGoing.contains(r.id) || (try? store.contentRecord(r.id))?.file != r.file { return .alreadyGoing }
            // Unreadable journal: anything could be dirty.
            guard (try? store.hasJournal(r.id)) == false else { return .notUploaded }
            t.recordsGoing.insert(r.id)
            return .evicted
        }
        guard outcome == .evicted else { return outcome }
        deleteGoingRecord(r.id, file: r.file)
        return .evicted
    }

    /// Deletes a record and its cache file marked in `recordsGoing` under the lock, outside it
    /// (no store write under the lock an open takes). Only the record naming `file` goes: one a
    /// `retain` made meanwhile names a new file. The file goes first: on a full cache disk the
    /// record's delete may fail, and the unlink is what frees the space. A rename's `move`
    /// meanwhile does not carry the record to the new name (see `move`).
    func deleteGoingRecord(_ id: ItemIdentifier, file: String) {
        deleteFileAndRecord(id, file: file)
        endRemoving(id)
    }

    /// `deleteGoingRecord` without clearing the mark (`endRemoving` does).
    func deleteFileAndRecord(_ id: ItemIdentifier, file: String) {
        unlink(path(file))
        try? store.deleteContent(id, file: file)
    }

    /// The record of `id` marked in `recordsGoing` is deleted (or its delete failed): an
    /// open may read the store for it again.
    func endRemoving(_ id: ItemIdentifier) {
        table.withLock { t in _ = t.recordsGoing.remove(id) }
    }

    /// Drops content cached for another version than `version` (the remote has a new one)
    /// unless something uses it (a handle or a download) or it was changed here (a journal
    /// row: the only copy, whatever version it is recorded under), both checked under the lock
    /// a write's open and a rename's record move take. It would never be served again and
    /// only takes disk.
    func dropOutdated(_ id: ItemIdentifier, version: String) {
        let file = table.withLock { t -> String? in
            if let e = t.entries[id], e.withLock({ es in es.users > 0 }) { return nil }
            guard let r = try? store.contentRecord(id), r.version != version else { return nil }
            guard (try? store.hasJournal(id)) == false else { return nil }
            t.entries[id] = nil
            t.recordsGoing.insert(id)
            return r.file
        }
        if let file { deleteGoingRecord(id, file: file) }
    }

    /// Items whose cached content is the only copy (dirty): never evicted. Nil when the journal
    /// cannot be read: then nothing may be evicted, since anything could be dirty.
    func dirtyItems() -> Set<ItemIdentifier>? {
        do {
            return Set(try store.journalEntries().map(\.id))
        } catch {
            log.error("cannot read the upload journal (\(error)): nothing is evicted")
            return nil
        }
    }

    /// Whether content at or below `id` is still arriving or its record not yet written (a
    /// download in flight, a save pending): freeing works from the records, and a file just
    /// read is recorded off the read's path. Files open in a program do not count (they stay).
    func isSettling(atOrBelow id: ItemIdentifier) -> Bool {
        table.withLock { t in
            t.entries.values.contains { e in
                e.withLock { es in
                    es.id.isAtOrBelow(id) && es.openHandles == 0
                        && (!es.inflight.isEmpty || es.recordBehind)
                }
            }
        }
    }

    /// The downloads running now, of every entry (`Downloads.stop` cancels them at unmount).
    func downloadsInFlight() -> [Task<Void, Error>] {
        table.withLock { t in t.entries.values.flatMap { e in e.withLock { es in Array(es.inflight.values) } } }
    }
}
