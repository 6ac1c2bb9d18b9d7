import Foundation

/// Files created, opened for writing, written, truncated, their times set: all local (the
/// cache file, the journal), but a time set where the remote keeps it.
extension Writing {
    // MARK: files

    /// Creates a file (or opens an existing one truncated, unless `exclusive`).
    func create(_ parent: ItemIdentifier, _ name: String, exclusive: Bool, host: any EnumerationsHost) async throws -> (item: Item, handle: UInt64) {
        let id = parent.child(name)
        if let problem = try writer(id).storageProblem(id, kind: .file) { throw problem }
        if ItemIdentifier.validate(name: name) != nil { throw error(.invalidName, id, "not a valid file name") }
        let state = try await enumerations.verifiedState(parent, host: host)
        if let existing = state[name] {
            if exclusive { throw error(.exists, id, "already exists") }
            let (h, _) = try await openFile(id, write: true, truncate: true)
            return (placeholders.cachedItem(id) ?? existing, h)
        }
        return try createNew(id)
    }

    /// A new, empty file at `id`, dirty and open for writing: its journal row and placeholder,
    /// its cache file. Local only.
    func createNew(_ id: ItemIdentifier) throws -> (item: Item, handle: UInt64) {
        let item = Item(identifier: id, kind: .file, size: 0, modified: Domain.now)
        log.debug("create \(id)")
        // A file deleted here while open may have left its record (for its handles): the new
        // file must not start with that content.
        content.dropStaleRecord(id)
        // The cache file first, then one transaction: journal row, placeholder, content record.
        let entry = try content.retain(item: item, version: Domain.contentVersion(item), asHandle: true, local: true, recordLater: true)
        let recorded: Bool
        do {
            recorded = try markDirty(id, isNew: true, placeholder: item, recording: entry)
        } catch {
            content.release(entry, asHandle: true)
            throw error
        }
        if recorded {
            placeholders.setPlaceholder(item, persist: false)
        } else {
            placeholders.setPlaceholder(item)
            content.persist(entry)
        }
        let h = handles.add(OpenFile(item: item, entry: entry, writable: true))
        if let parent = id.parent { folderChanged(parent) }
        return (item, h)
    }

    /// Opens a file; for writing, its whole content is made present first (it will be
    /// uploaded whole), unless truncated to zero.
    func openFile(_ id: ItemIdentifier, write: Bool, truncate: Bool) async throws -> (handle: UInt64, keepCache: Bool) {
        guard write || truncate else { return try reading.openFile(id) }
        _ = try writer(id)
        let (found, wasDirty) = placeholders.snapshot(id)
        guard let item = found else { throw error(.notFound, id, "no such item") }
        guard item.kind == .file else { throw error(.isAFolder, id, "not a file") }
        log.debug("open \(id) write=\(write) truncate=\(truncate) dirty=\(wasDirty) version=\(item.version ?? "-") size=\(item.size)")
        let entry = try reading.retainForOpen(item, version: Domain.contentVersion(item), dirty: wasDirty)
        do {
            if truncate {
                // Under the name the entry answers to when marked: a rename since the name was
                // read took the file (and this entry) along.
                let marked = try markDirtyFollowing(entry, from: id)
                writeBack.streamOutOfOrder(marked, "the file was truncated")
                try entry.setSize(0)
                let landed = changeLanded(in: entry)
                touch(landed, size: 0)
            } else if !wasDirty && item.size > 0 {
                try await downloads.provide(entry, item: item, range: 0..<item.size, prefetch: nil, provider: provider)
            }
        } catch {
            content.release(entry, asHandle: true)
            throw error
        }
        let h = handles.add(OpenFile(item: item, entry: entry, writable: write))
        if !write { handles.forgetOpenedVersion(id) }
        return (h, false)
    }

    /// Writes through a writable handle into the cache file. Local disk only, no network.
    func write(handle: UInt64, offset: Int64, _ buffer: UnsafeRawBufferPointer) throws -> Int {
        let f = try reading.file( handle)
        guard f.writable else { throw error(.denied, f.entry.id, "not open for writing") }
        let (id, deleted, stale) = f.entry.withLock { es in (es.id, es.deleted, es.stale) }
        // Writes to a deleted file stay with the process that has it open (POSIX); they are
        // never uploaded.
        if deleted { return try f.entry.write(at: offset, buffer) }
        if stale { throw supersededError(id) }
        // Gone at the remote and its name a folder now: nothing to bring back there; the writes
        // stay with the descriptor, as for a deleted file.
        try checkFileSize(id, offset + Int64(buffer.count))
        // Based on the placeholder's version now (an upload of ours may have committed a newer
        // version since this handle was opened) unless the remote changed under the handle.
        do {
            _ = try markDirtyRecording(through: f)
        } catch is NameIsNotAFileNow {
            return try f.entry.write(at: offset, buffer)
        }
        let n = try f.entry.write(at: offset, buffer)
        // The name the content answers to now: a conflict copy's hand-over since the mark
        // made it the copy's, whose upload must not count as covering these bytes.
        let landed = changeLanded(in: f.entry)
        touch(landed, size: f.entry.withLock { es in es.size })
        writeBack.streamAfterWrite(landed, offset: offset, count: n, host: self)
        return n
    }

    /// A write through a handle whose content went stale: the file changed at the remote while
    /// the handle was open and clean, and was opened again here since, so the new version took
    /// the name's cache entry (and may share its cache file). Such a write can be neither kept
    /// nor based on anything the remote has: the program is told (ESTALE) instead of the write
    /// being acknowledged and dropped. (The reference model's ideal — the write becomes a
    /// conflict copy — is KnownIssues.writeThroughHandleBehindANewerOpen.)
    private func supersededError(_ id: ItemIdentifier) -> ProviderError {
        error(.versionChanged, id, "the file changed on the server while open here and was opened again since; "
              + "writes through this descriptor cannot be kept: reopen the file")
    }

    /// Truncates or extends a file (setattr size), through `handle` when given.
    func setSize(_ id: ItemIdentifier, _ size: Int64, handle: UInt64?) async throws -> Item {
        _ = try writer(id)
        if let handle {
            let f = try reading.file( handle)
            // The handle's file, wherever it is now (renamed, or handed to a conflict copy).
            let file = f.entry.withLock { es in es.id }
            // A handle whose file was copied at the remote (`copyRange`) has not its bytes yet.
            if f.copiedFrom != nil {
                try await prepareForWriting(handle: handle)
                return try await setSize(id, size, handle: handle)
            }
            guard f.writable else { throw error(.denied, id, "not open for writing") }
            let (deleted, stale) = f.entry.withLock { es in (es.deleted, es.stale) }
            if deleted {
                try f.entry.setSize(size)
                return handles.orphanItem(id) ?? f.item
            }
            if stale { throw supersededError(file) }
            try checkFileSize(file, size)
            let marked: ItemIdentifier
            do {
                marked = try markDirtyRecording(through: f)
            } catch is NameIsNotAFileNow {
                try f.entry.setSize(size)
                return f.item
            }
            writeBack.streamOutOfOrder(marked, "the file was truncated or extended to \(size) bytes")
            try f.entry.setSize(size)
            let landed = changeLanded(in: f.entry)
            touch(landed, size: size)
            return placeholders.cachedItem(id) ?? f.item
        }
        guard let item = placeholders.cachedItem(id) else { throw error(.notFound, id, "no such item") }
        guard item.kind == .file else { throw error(.isAFolder, id, "not a file") }
        let (h, _) = try await openFile(id, write: true, truncate: size == 0)
        defer { closeFile(h) }
        if size != 0 { return try await setSize(id, size, handle: h) }
        return placeholders.cachedItem(id) ?? item
    }

    /// Sets a file's modification time where the remote keeps it; elsewhere it is kept in the
    /// placeholder until the next listing (see docs/behaviour.md).
    func setModified(_ id: ItemIdentifier, _ time: Timestamp) async throws -> Item {
        if let kept = try setModifiedImmediately(id, time) { return kept }
        let w = try writer(id)
        guard var item = placeholders.cachedItem(id) else { throw error(.notFound, id, "no such item") }
        let before = Domain.contentVersion(item)
        item.modifiedTime = time
        do {
            item = try await w.setModified(id, to: time)
            // Where a new time is a new version (SFTP, local: size and mtime), an open handle's
            // content is still that version: not a change from another client.
            content.setVersion(id, Domain.contentVersion(item), ifStill: before)
        }
        catch let e as ProviderError where e.kind == .notSupported {
            if let version = item.contentTag { keepTime(id, version: version, time: time, because: e) }
        } catch let e as ProviderError where e.kind == .versionChanged {
            // It changed at the server while the time was set (a folder files are still being
            // uploaded into): shown here until a listing says what the server has now.
            log.info("the time of \(id) is not kept at the server: \(e.detail)")
        }
        placeholders.setPlaceholder(item)
        return item
    }

    /// A time the remote does not keep (`e`), kept here while the remote has `version` (the
    /// item's content tag): a listing must not turn it back (rsync would copy everything again).

    // MARK: answered on the FUSE thread

    /// `create` of a name known to be absent (see `lookupImmediately`): the journal row, the
    /// placeholder and the cache file, all local. Nil when the name exists or is not known.
    func createImmediately(_ parent: ItemIdentifier, _ name: String, host: any EnumerationsHost) throws -> (item: Item, handle: UInt64)? {
        let id = parent.child(name)
        if let problem = try writer(id).storageProblem(id, kind: .file) { throw problem }
        if ItemIdentifier.validate(name: name) != nil { throw error(.invalidName, id, "not a valid file name") }
        guard case .absent? = enumerations.lookupImmediately(parent, name, host: host) else { return nil }
        return try createNew(id)
    }

    /// `setModified` of a dirty item (or one deleted while open): the time waits for the upload
    /// (or dies with the item), so nothing goes to the remote now. Nil for any other item
    /// (`setModified` then sets it at the remote).
    /// `tar x` sets the time of every file it has just written.
    func setModifiedImmediately(_ id: ItemIdentifier, _ time: Timestamp) throws -> Item? {
        _ = try writer(id)
        if let orphan = handles.setOrphanModified(id, time) { return orphan }
        guard var item = placeholders.cachedItem(id) else { return nil }
        item.modifiedTime = time
        let deferred = lock.withLock { s in s.dirty.setPendingModified(id, time) }
        guard deferred else { return nil }
        placeholders.setPlaceholder(item, persist: false)
        return item
    }

    // MARK: a file made by a server-side copy

    /// True when `handle` is a file made by a server-side copy, whose content must come here
    /// (`prepareForWriting`) before a write through it. No network.
    func needsContentBeforeWriting(handle: UInt64) -> Bool {
        handles.file(handle)?.copiedFrom != nil
    }

    /// Makes a handle of a file made by a server-side copy writable again: its whole content is
    /// fetched (as an open for writing does), then writes through it change the copy like any
    /// file's (dirty, uploaded over the copy's version at close). Nothing for another handle.
    func prepareForWriting(handle: UInt64) async throws {
        let f = try reading.file( handle)
        guard f.copiedFrom != nil else { return }
        let size = f.entry.withLock { es in es.size }
        if size > 0 { try await downloads.provide(f.entry, item: f.item, range: 0..<size, prefetch: nil, provider: provider) }
        _ = handles.replace(handle, ifStill: f, with: OpenFile(item: f.item, entry: f.entry, writable: true))
        log.debug("\(f.item.identifier): the server-side copy is here now, for writing through its handle")
    }
}
