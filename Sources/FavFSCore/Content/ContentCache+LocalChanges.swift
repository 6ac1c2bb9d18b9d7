import Foundation

/// Local changes to cached content: records, versions, renames and deletions here (an entry's
/// own writes and sizes: `ContentEntry`).
extension ContentCache {
    /// Persists an entry's ranges and size now (after local writes).
    func persist(_ e: ContentEntry, with item: Item? = nil) {
        e.withLock { es in es.recorded = true }
        do { try e.saveRecord(to: store, with: item) } catch { log.warning("cannot record cache entry for \(e.withLock { es in es.id }): \(error)") }
    }

    /// Records the version content now belongs to (after an upload the remote confirmed).
    func setVersion(_ id: ItemIdentifier, _ version: String) {
        table.withLock { t in
            if let e = t.entries[id] { e.withLock { es in es.version = version } }
        }
    }

    /// Forgets the content record of `id` (a new file is being created there) and removes its
    /// cache file unless an open entry still uses it (a file deleted while open). Found by the
    /// reference model: a new empty file read the content of the file deleted before it.
    func dropStaleRecord(_ id: ItemIdentifier) {
        guard let r = try? store.contentRecord(id) else { return }
        let inUse = table.withLock { t in t.entries.values.contains { $0.file == r.file } }
        if !inUse { unlink(path(r.file)) }
        try? store.deleteContent(id)
    }

    /// `setVersion`, only if the open entry still has version `old`.
    func setVersion(_ id: ItemIdentifier, _ version: String, ifStill old: String) {
        table.withLock { t in
            if let e = t.entries[id] { e.withLock { es in if es.version == old { es.version = version } } }
        }
    }

    /// Follows a rename: `record` moves the records in the store, and open entries at and
    /// below `from` answer to `to`. Their record saves wait meanwhile (their `saveLock`s are
    /// held), so none lands under the old name after the store moved: such a row would point a
    /// later item of that name at this cache file.
    /// `version`: the version the moved content is recorded under from now on (a local edit
    /// handed to its conflict copy).
    func move(_ from: ItemIdentifier, to: ItemIdentifier, version: String? = nil, record: () throws -> Void) throws {
        // SQLite's writer first, then the lock: the rows move under it without waiting for a
        // listing being saved, and are committed before it is released.
        try store.holdingWriter { writer in try table.withLock { t in
            let moving = t.entries.filter { $0.key.isAtOrBelow(from) }
            // Entries at the destination are the replaced item's: the caller removed those it
            // knew of, but an open or a read-ahead may have made one since, whose record would
            // land over the moved one (naming the old content, the moved one's file lost). They
            // are the replaced file's now, as for a delete: kept for their users, never saved.
            let replaced = t.entries.filter { $0.key.isAtOrBelow(to) && !$0.key.isAtOrBelow(from) }
            for (_, e) in moving { e.saveLock.lock() }
            for (_, e) in replaced { e.saveLock.lock() }
            defer {
                for (_, e) in moving { e.saveLock.unlock() }
                for (_, e) in replaced { e.saveLock.unlock() }
            }
            // Under the lock: an open of a name at or below either path must not find the store
            // moved and the entries not (it would open a second entry on one cache file). The one
            // store write under this lock, on the writer taken before it (`holdingWriter`).
            // Records being deleted (`recordsGoing`: decided under this lock, their files unlinked
            // outside it) must not live on under the new name, naming a deleted file: read as
            // zeros of the right size (rsync's temp file renamed over its target while a listing
            // said the temp name was gone, on a Dropbox mount). Their rows go with the move; the
            // new name's content is downloaded when read.
            let going = t.recordsGoing.filter { $0.isAtOrBelow(from) }.compactMap { id -> (ItemIdentifier, String)? in
                guard let r = try? store.contentRecord(id) else { return nil }
                return (id, r.file)
            }
            func renamed(_ id: ItemIdentifier) -> ItemIdentifier { ItemIdentifier(to.rawValue + id.rawValue.dropFirst(from.rawValue.count)) }
            try record()
            for (id, file) in going { try? store.deleteContent(renamed(id), file: file) }
            try writer.commit()
            for (id, e) in replaced {
                e.withLock { es in es.deleted = true }
                t.entries[id] = nil
            }
            for (id, e) in moving {
                let newId = renamed(id)
                t.entries[id] = nil
                e.withLock { es in es.id = newId; if let version { es.version = version } }
                t.entries[newId] = e
            }
            for e in t.superseded {
                e.withLock { es in
                    if es.id.isAtOrBelow(from) { es.id = renamed(es.id) }
                }
            }
        } }
    }

    /// Drops an item's content for good (it was deleted); open handles keep their file until closed.
    /// `atTheRemote`: another client deleted it. Handles on a version the file had before its
    /// last open here (superseded) are then not made a deleted file's: their writes would stay
    /// private, acknowledged and never uploaded; they go on answering ESTALE, as before the
    /// delete (a 1000-step reference-model run, seed 8). And content open here or changed here
    /// (a journal row) stays: see `beginRemoving`.
    func remove(_ id: ItemIdentifier, atTheRemote: Bool = false) {
        if let file = beginRemoving(id, atTheRemote: atTheRemote) { deleteGoingRecord(id, file: file) }
    }

    /// `remove` for a caller holding SQLite's writer (`PlaceholderStore.holdingWriter`): the
    /// record's delete joins the caller's transaction. The mark that keeps an open from taking
    /// the record (`recordsGoing`) stays until `endRemoving`, which the caller makes after its
    /// commit: cleared before, an open of the name would read the committed record, naming the
    /// unlinked file. Returns whether `endRemoving` is owed.
    func removeInHeldTransaction(_ id: ItemIdentifier) -> Bool {
        guard let file = beginRemoving(id, atTheRemote: false) else { return false }
        deleteFileAndRecord(id, file: file)
        return true
    }

    /// `remove`'s first step, under the lock: the open entries of `id` are forgotten and its
    /// record marked going; returns the cache file the record names, for `deleteGoingRecord`.
    /// `atTheRemote`: nothing happens (nil) when `id` is open or has a journal row, both checked
    /// here, under the lock an open and a rename's record move take: the caller's own look
    /// (a listing's) came earlier, and a file written and closed, or a changed file renamed
    /// onto the name, since then holds the only copy of what was written. Unreadable journal:
    /// nothing is removed.
    func beginRemoving(_ id: ItemIdentifier, atTheRemote: Bool) -> String? {
        table.withLock { t -> String? in
            if atTheRemote {
                if openEntryLocked(&t, id) != nil { return nil }
                guard (try? store.hasJournal(id)) == false else { return nil }
            }
            _ = detachLocked(&t, id, superseded: !atTheRemote)
            guard let r = try? store.contentRecord(id) else { return nil }
            t.recordsGoing.insert(id)
            return r.file
        }
    }

    /// `remove` in two steps, for a caller holding a lock no SQLite call may run under
    /// (`Domain.lock`): this one forgets the open entries of `id` (marked deleted) and returns
    /// the cache file of the one in use; `removeRecord` then deletes that file and its record.
    func detach(_ id: ItemIdentifier) -> String? {
        table.withLock { t in detachLocked(&t, id) }
    }

    /// `superseded`: whether the stale entries of `id` are marked deleted too.
    private func detachLocked(_ t: inout EntryTable, _ id: ItemIdentifier, superseded orphaningStale: Bool = true) -> String? {
        let file = t.entries[id]?.file
        if let e = t.entries[id] {
            // Under its `saveLock` (as `move` takes them): a record save of it in flight — a
            // close's or an open's, made outside this lock — lands before the record is deleted,
            // and none starts after (it sees `deleted`). Without it a close's save could land
            // after the delete and bring back a record naming the deleted file.
            e.saveLock.lock()
            e.withLock { es in es.deleted = true }
            e.saveLock.unlock()
            t.entries[id] = nil
        }
        for e in t.superseded where orphaningStale && e.withLock({ es in es.id == id }) { e.withLock { es in es.deleted = true } }
        return file
    }

    /// The second step of `remove` (after `detach`): the cache file `file` goes, with the record
    /// of `id` if it still names that file (not one a newer entry recorded meanwhile).
    func removeRecord(_ id: ItemIdentifier, file: String) {
        unlink(path(file))
        try? store.deleteContent(id, file: file)
    }
}
