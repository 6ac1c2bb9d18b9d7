import Foundation

/// Making an item dirty: its journal row is written before a change is acknowledged.
extension Writing {
    /// Makes an item dirty: the journal row is written before the change is acknowledged. The
    /// base version is the placeholder's, read under the same lock as the dirty check: an upload
    /// committing in between would otherwise leave the new change based on the old version.
    /// `placeholder` (a file created here) is recorded in the journal row's transaction. True
    /// when a journal row was written (the item was clean).
    ///
    /// `recording`: the content entry the change lands in. Its record is written in the journal
    /// row's transaction when the store has none yet (an entry opened without a byte downloaded:
    /// a truncating open, an empty file): a crash before the close must find the cache file
    /// named by a record, or the next mount takes it for unknown content and the change is lost
    /// (the reference model's `truncatingOpenNotRecordedUntilClose`). When the entry answers to
    /// another name than `id` by now (a rename, or its edit handed to a conflict copy, after the
    /// caller read the name), nothing is marked: `ItemMovedMeanwhile` names where it is.
    ///
    /// `through`: the handle written through (its entry is `recording`'s). When its content is
    /// not the placeholder's version (another client changed the file while it was open), the
    /// change is based on the version the handle's content came from: its upload then meets the
    /// newer version and becomes a conflict copy, instead of replacing the other client's edit.
    /// When the file is gone at the remote (deleted or renamed away by another client while open
    /// here), the write brings it back: its placeholder is written again with the journal row,
    /// based on the version the handle opened, so its upload finds that version gone and makes a
    /// conflict copy. When the name is a folder now, there is nothing to bring back:
    /// `NameIsNotAFileNow` is thrown and the caller keeps the handle's writes with its
    /// descriptor, as a deleted file's. Without a handle, a name gone meanwhile is not found.
    ///
    /// A row is written holding SQLite's writer from the look at the name to the commit (the
    /// lock order allows the writer before `Domain.lock`): a rename records its move in the
    /// store and in memory in one step under the writer too (`NamespaceChanges.rename`), so a
    /// row never lands under a name its item left, where it named the moved file's cache file
    /// a second time and asked for an upload of an item gone (an open truncating a file while
    /// it was renamed: the signal storm of `IntegrityEndToEndTests`).
    @discardableResult
    func markDirty(_ id: ItemIdentifier, isNew: Bool = false, placeholder: Item? = nil,
                   recording entry: ContentEntry? = nil, through handle: OpenFile? = nil) throws -> Bool {
        if let parent = id.parent { placeholders.preload(parent) }
        // Dirty already, with no row to save: the change counts (its generation moves on) and
        // nothing waits for the writer.
        let plain = try lock.withLock { s -> Bool in
            if let (now, deleted) = entry?.withLock({ es in (es.id, es.deleted) }) {
                // Deleted (or replaced by a rename) since it was opened: its content lives on
                // only in its descriptors, and nothing is uploaded for it.
                if deleted { return true }
                if now != id { throw ItemMovedMeanwhile(now: now) }
            }
            guard s.dirty.isDirtyWithNoRowToSave(id) else { return false }
            _ = s.dirty.changing(id)
            return true
        }
        if plain { return false }
        let attempt = { try self.markDirtyHoldingWriter(id, isNew: isNew, placeholder: placeholder, entry: entry, handle: handle) }
        let outcome: (recorded: Bool, back: Item?)
        do {
            outcome = try attempt()
        } catch let e where Self.passesThrough(e) {
            throw e
        } catch where PlaceholderStore.isDiskFull(error) && reading.downloads.eviction.evictForSpace(needed: 1 << 20, except: id, for: "to record the change of \(id)") > 0 {
            // The cache disk is full: clean content made room; the journal row must be written.
            do { outcome = try attempt() } catch let e where Self.passesThrough(e) { throw e }
            catch { throw self.error(.noSpace, id, "cannot record the change: \(error)") }
        } catch {
            throw self.error(PlaceholderStore.isDiskFull(error) ? .noSpace : .localIO, id, "cannot record the change: \(error)")
        }
        // Brought back by a write through a handle of a file gone at the remote: it shows again.
        if let back = outcome.back { placeholders.setPlaceholder(back, persist: false) }
        return outcome.recorded
    }

    /// What `markDirty` throws as it came: where the change goes instead, or a refusal already
    /// named. Anything else is the store failing to record the change.
    private static func passesThrough(_ e: Error) -> Bool {
        e is ItemMovedMeanwhile || e is NameIsNotAFileNow || e is ProviderError
    }

    /// `markDirty`'s row, written under SQLite's writer: the name looked at, the row (with the
    /// entry's record when the store has none) committed and the item made dirty in memory, with
    /// no rename in between. Returns whether a row was written, and the placeholder to show
    /// again (a file brought back by a write).
    private func markDirtyHoldingWriter(_ id: ItemIdentifier, isNew: Bool, placeholder: Item?, entry: ContentEntry?,
                                        handle: OpenFile?) throws -> (recorded: Bool, back: Item?) {
        try store.holdingWriter { writer in
            var placeholder = placeholder
            var nameIsAFolder = false
            var movedTo: ItemIdentifier?
            var gone = false
            let (exists, base, rowToSave) = lock.withLock { s -> (Bool, String?, JournalEntry?) in
                if let (now, deleted) = entry?.withLock({ es in (es.id, es.deleted) }) {
                    if deleted { return (true, nil, nil) }
                    if now != id {
                        movedTo = now
                        return (true, nil, nil)
                    }
                }
                guard case .dirty(let rowToSave) = s.dirty.changing(id) else {
                    if isNew { return (false, nil, nil) }
                    // Read under the lock an upload's commit sets the entry's new version under:
                    // read before it, a write racing the commit of our own upload took the old
                    // version for a change at the remote (a conflict copy of our own edit).
                    let handleVersion = handle.map { f in f.entry.withLock { es in es.version } }
                    let current = placeholders.cachedItemLocked(&s, id)
                    if current == nil && handle == nil {
                        gone = true
                        return (true, nil, nil)
                    }
                    if handle != nil, let current, current.kind != .file {
                        nameIsAFolder = true
                        return (false, nil, nil)
                    }
                    if current == nil, let f = handle, let handleVersion {
                        var back = f.item
                        back.identifier = id
                        back.size = f.entry.withLock { es in es.size }
                        placeholder = back
                        let opened = handleVersion == Domain.contentVersion(f.item) ? f.item.version : nil
                        log.info("\(id) was deleted at the remote while open here: a write brings it back; its upload will be a conflict copy")
                        return (false, opened ?? "favfs-outdated:\(handleVersion)", nil)
                    }
                    guard let f = handle, let handleVersion, let current, handleVersion != Domain.contentVersion(current) else {
                        return (false, current?.version, nil)
                    }
                    let opened = handleVersion == Domain.contentVersion(f.item) ? f.item.version : nil
                    log.info("\(id) changed at the remote while open here: the write is based on the version it was opened at; its upload will be a conflict copy")
                    return (false, opened ?? "favfs-outdated:\(handleVersion)", nil)
                }
                // A change to content the server refused is worth another try, or a change during
                // an upload's commit (which deletes the row it answered): its row is saved.
                return (true, nil, rowToSave)
            }
            if let movedTo { throw ItemMovedMeanwhile(now: movedTo) }
            if nameIsAFolder { throw NameIsNotAFileNow() }
            if gone { throw error(.notFound, id, "renamed or deleted while being opened") }
            if let rowToSave { try store.saveJournal(rowToSave) }
            if exists { return (false, nil) }
            // The entry's record when the store has none yet, named under the writer: a rename
            // cannot move the entry between this look and the commit.
            let record = entry.flatMap { e in e.withLock { es in es.recorded || es.deleted || es.stale ? nil : es.record(file: e.file) } }
            let j = JournalEntry(id: id, baseVersion: base, isNew: isNew, since: Domain.now)
            try store.saveJournal(j, with: placeholder, content: record)
            try writer.commitHoldingNoLock()
            lock.withLock { s in s.dirty.recorded(j, isNew: isNew) }  // created empty here: may stream (see streamAfterWrite)
            if record != nil { entry?.markRecorded() }
            return (true, isNew ? nil : placeholder)
        }
    }

    /// `markDirty` recording `entry`, under the name the entry answers to when the change is
    /// marked, starting from `id`: read again when it moved meanwhile (a rename, or a conflict
    /// copy's hand-over, between reading the name and marking it). Returns that name.
    @discardableResult
    func markDirtyFollowing(_ entry: ContentEntry, from id: ItemIdentifier, through handle: OpenFile? = nil) throws -> ItemIdentifier {
        var id = id
        for _ in 0..<8 {
            do {
                try markDirty(id, recording: entry, through: handle)
                return id
            } catch let moved as ItemMovedMeanwhile {
                id = moved.now
            }
        }
        throw error(.localIO, id, "the file kept being renamed while written to")
    }

    /// `markDirtyFollowing` for a write through `handle`.
    func markDirtyRecording(through handle: OpenFile) throws -> ItemIdentifier {
        try markDirtyFollowing(handle.entry, from: handle.entry.id, through: handle)
    }
}
