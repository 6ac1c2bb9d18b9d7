import Foundation

/// Content changes made through the mount: they land in the cache file and make the item dirty
/// (journal row first); the last close or an fsync uploads. Namespace changes (mkdir, unlink,
/// rmdir, rename) are in Domain+Namespace.swift.
extension Domain {
    /// The provider's write side, or EROFS.
    func writer(_ id: ItemIdentifier) throws -> any WritableProvider {
        guard !options.readOnly, let w = provider as? any WritableProvider else {
            throw error(.readOnly, id, "this mount is read-only")
        }
        return w
    }

    public var isWritable: Bool { !options.readOnly && provider is any WritableProvider }

    /// Refuses a size the remote would not store (`maxFileSize`), before anything is written.
    func checkFileSize(_ id: ItemIdentifier, _ size: Int64) throws {
        guard let limit = maxFileSize, size > limit else { return }
        throw error(.tooLarge, id, "\(provider.remoteDescription) stores files of at most \(limit) bytes; this write would make it \(size)")
    }

    // MARK: placeholders changed here

    /// Updates the in-memory placeholder of a file being written (size, mtime); the store
    /// follows on close.
    private func touch(_ id: ItemIdentifier, size: Int64) {
        guard !id.isRoot else { return }
        let now = Self.now
        lock.withLock { s in s.namespace.update(id) { $0.size = size; $0.modified = now } }
    }

    /// A folder's mtime (and so ctime) moves when an entry is created, removed or renamed in
    /// it, as POSIX says and file managers expect; kept in memory until the next listing of
    /// its parent brings the server's.
    func folderChanged(_ folder: ItemIdentifier) {
        let now = Timestamp(Self.now)
        lock.withLock { s in s.namespace.update(folder) { $0.modifiedTime = now } }
    }

    /// Makes an item dirty: the journal row is written before the change is acknowledged. The
    /// base version is the placeholder's, read under the same lock as the dirty check: an upload
    /// committing in between would otherwise leave the new change based on the old version.
    /// `placeholder` (a file created here) is recorded in the journal row's transaction. True
    /// when a journal row was written (the item was clean).
    ///
    /// `through`: the handle written through. When its content is not the placeholder's version
    /// (another client changed the file while it was open), the change is based on the version
    /// the handle's content came from: its upload then meets the newer version and becomes a
    /// conflict copy, instead of replacing the other client's edit. When the file is gone at the
    /// remote (deleted or renamed away by another client while open here), the write brings it
    /// back: its placeholder is written again with the journal row, based on the version the
    /// handle opened, so its upload finds that version gone and makes a conflict copy. When the
    /// name is a folder now, there is nothing to bring back: `NameIsNotAFileNow` is thrown and
    /// the caller keeps the handle's writes with its descriptor, as a deleted file's.
    @discardableResult
    func markDirty(_ id: ItemIdentifier, isNew: Bool = false, placeholder: Item? = nil,
                   content record: PlaceholderStore.ContentRecord? = nil, through handle: OpenFile? = nil) throws -> Bool {
        var placeholder = placeholder
        var nameIsAFolder = false
        if let parent = id.parent { preload(parent) }
        let (exists, base, rowToSave) = lock.withLock { s -> (Bool, String?, PlaceholderStore.JournalEntry?) in
            guard case .dirty(let rowToSave) = s.dirty.changing(id) else {
                if isNew { return (false, nil, nil) }
                // Read under the lock an upload's commit sets the entry's new version under:
                // read before it, a write racing the commit of our own upload took the old
                // version for a change at the remote (a conflict copy of our own edit).
                let handleVersion = handle.map { f in f.entry.withLock { f.entry.version } }
                let current = placeholders.cachedItemLocked(&s, id)
                if handle != nil, let current, current.kind != .file {
                    nameIsAFolder = true
                    return (false, nil, nil)
                }
                if current == nil, let f = handle, let handleVersion {
                    var back = f.item
                    back.identifier = id
                    back.size = f.entry.withLock { f.entry.size }
                    placeholder = back
                    let opened = handleVersion == Self.contentVersion(f.item) ? f.item.version : nil
                    log.info("\(id) was deleted at the remote while open here: a write brings it back; its upload will be a conflict copy")
                    return (false, opened ?? "favfs-outdated:\(handleVersion)", nil)
                }
                guard let f = handle, let handleVersion, let current, handleVersion != Self.contentVersion(current) else {
                    return (false, current?.version, nil)
                }
                let opened = handleVersion == Self.contentVersion(f.item) ? f.item.version : nil
                log.info("\(id) changed at the remote while open here: the write is based on the version it was opened at; its upload will be a conflict copy")
                return (false, opened ?? "favfs-outdated:\(handleVersion)", nil)
            }
            // A change to content the server refused is worth another try, or a change during
            // an upload's commit (which deletes the row it answered): its row is saved.
            return (true, nil, rowToSave)
        }
        if nameIsAFolder { throw NameIsNotAFileNow() }
        if let rowToSave { try store.saveJournal(rowToSave) }
        if exists { return false }
        let j = PlaceholderStore.JournalEntry(id: id, baseVersion: base, isNew: isNew, since: Self.now)
        do {
            try store.saveJournal(j, with: placeholder, content: record)
        } catch where PlaceholderStore.isDiskFull(error) && content.evictForSpace(needed: 1 << 20, except: id, for: "to record the change of \(id)") > 0 {
            // The cache disk is full: clean content made room; the journal row must be written.
            do { try store.saveJournal(j, with: placeholder, content: record) } catch { throw self.error(.noSpace, id, "cannot record the change: \(error)") }
        } catch {
            throw self.error(PlaceholderStore.isDiskFull(error) ? .noSpace : .localIO, id, "cannot record the change: \(error)")
        }
        lock.withLock { s in s.dirty.recorded(j, isNew: isNew) }  // created empty here: may stream (see streamAfterWrite)
        // Brought back by a write through a handle of a file gone at the remote: it shows again.
        if !isNew, let back = placeholder { placeholders.setPlaceholder(back, persist: false) }
        return true
    }

    /// After the bytes of a change landed in the cache file: an upload that began between
    /// `markDirty` (journal first, for crashes) and the write may not have read them, so it must
    /// not count as covering this change.
    func changeLanded(_ id: ItemIdentifier) {
        lock.withLock { s in s.dirty.landed(id) }
    }

    func isDirty(_ id: ItemIdentifier) -> Bool { lock.withLock { s in s.dirty.isDirty(id) } }

    // MARK: files

    /// `markDirty`, with the content record of `entry` in the journal row's transaction when the
    /// store has none yet (an entry opened without a byte downloaded: a truncating open, an
    /// empty file): a crash before the close must find the cache file named by a record, or
    /// the next mount takes it for unknown content and the change is lost. Found by the
    /// reference model (`truncatingOpenNotRecordedUntilClose`).
    func markDirtyRecording(_ id: ItemIdentifier, _ entry: ContentEntry, through handle: OpenFile? = nil) throws {
        let unrecorded = entry.withLock { entry.recorded || entry.deleted || entry.stale ? nil : entry.record }
        if try markDirty(id, content: unrecorded, through: handle), unrecorded != nil { content.recorded(entry) }
    }

    /// Creates a file (or opens an existing one truncated, unless `exclusive`).
    public func create(_ parent: ItemIdentifier, _ name: String, exclusive: Bool) async throws -> (item: Item, handle: UInt64) {
        let id = parent.child(name)
        if let problem = try writer(id).storageProblem(id, kind: .file) { throw problem }
        if ItemIdentifier.validate(name: name) != nil { throw error(.invalidName, id, "not a valid file name") }
        let state = try await verifiedState(parent)
        if let existing = state[name] {
            if exclusive { throw error(.exists, id, "already exists") }
            let (h, _) = try await openFile(id, write: true, truncate: true)
            return (cachedItem(id) ?? existing, h)
        }
        return try createNew(id)
    }

    /// A new, empty file at `id`, dirty and open for writing: its journal row and placeholder,
    /// its cache file. Local only.
    func createNew(_ id: ItemIdentifier) throws -> (item: Item, handle: UInt64) {
        let item = Item(identifier: id, kind: .file, size: 0, modified: Self.now)
        log.debug("create \(id)")
        // A file deleted here while open may have left its record (for its handles): the new
        // file must not start with that content.
        content.dropStaleRecord(id)
        // The cache file first, then one transaction: journal row, placeholder, content record.
        let entry = try content.retain(item: item, version: Self.contentVersion(item), asHandle: true, local: true, recordLater: true)
        let recorded: Bool
        do {
            recorded = try markDirty(id, isNew: true, placeholder: item, content: entry.withLock { entry.record })
        } catch {
            content.release(entry, asHandle: true)
            throw error
        }
        if recorded {
            content.recorded(entry)
            placeholders.setPlaceholder(item, persist: false)
        } else {
            placeholders.setPlaceholder(item)
            content.persist(entry)
        }
        let h = addHandle(OpenFile(item: item, entry: entry, writable: true))
        if let parent = id.parent { folderChanged(parent) }
        return (item, h)
    }

    func addHandle(_ f: OpenFile) -> UInt64 { handles.add(f) }

    /// Opens a file; for writing, its whole content is made present first (it will be
    /// uploaded whole), unless truncated to zero.
    public func openFile(_ id: ItemIdentifier, write: Bool, truncate: Bool) async throws -> (handle: UInt64, keepCache: Bool) {
        guard write || truncate else { return try openFile(id) }
        _ = try writer(id)
        let (found, wasDirty) = snapshot(id)
        guard let item = found else { throw error(.notFound, id, "no such item") }
        guard item.kind == .file else { throw error(.isAFolder, id, "not a file") }
        log.debug("open \(id) write=\(write) truncate=\(truncate) dirty=\(wasDirty) version=\(item.version ?? "-") size=\(item.size)")
        let entry = try retainForOpen(item, version: Self.contentVersion(item), dirty: wasDirty)
        do {
            if truncate {
                try markDirtyRecording(id, entry)
                writeBack.streamOutOfOrder(id, "the file was truncated")
                try content.setSize(entry, 0)
                changeLanded(id)
                touch(id, size: 0)
            } else if !wasDirty && item.size > 0 {
                try await content.provide(entry, item: item, range: 0..<item.size, prefetch: nil, provider: provider)
            }
        } catch {
            content.release(entry, asHandle: true)
            throw error
        }
        let h = addHandle(OpenFile(item: item, entry: entry, writable: write))
        if !write { handles.forgetOpenedVersion(id) }
        return (h, false)
    }

    /// Writes through a writable handle into the cache file. Local disk only, no network.
    public func write(handle: UInt64, offset: Int64, _ buffer: UnsafeRawBufferPointer) throws -> Int {
        let f = try openFile(handle: handle)
        guard f.writable else { throw error(.denied, f.entry.id, "not open for writing") }
        let (id, deleted, stale) = f.entry.withLock { (f.entry.id, f.entry.deleted, f.entry.stale) }
        // Writes to a deleted file stay with the process that has it open (POSIX); they are
        // never uploaded.
        if deleted { return try content.write(f.entry, offset: offset, buffer) }
        if stale { throw supersededError(id) }
        // Gone at the remote and its name a folder now: nothing to bring back there; the writes
        // stay with the descriptor, as for a deleted file.
        try checkFileSize(id, offset + Int64(buffer.count))
        // Based on the placeholder's version now (an upload of ours may have committed a newer
        // version since this handle was opened) unless the remote changed under the handle.
        do {
            try markDirtyRecording(id, f.entry, through: f)
        } catch is NameIsNotAFileNow {
            return try content.write(f.entry, offset: offset, buffer)
        }
        let n = try content.write(f.entry, offset: offset, buffer)
        changeLanded(id)
        touch(id, size: f.entry.withLock { f.entry.size })
        writeBack.streamAfterWrite(id, offset: offset, count: n, host: self)
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
    public func setSize(_ id: ItemIdentifier, _ size: Int64, handle: UInt64?) async throws -> Item {
        _ = try writer(id)
        if let handle {
            let f = try openFile(handle: handle)
            // The handle's file, wherever it is now (renamed, or handed to a conflict copy).
            let file = f.entry.withLock { f.entry.id }
            // A handle whose file was copied at the remote (`copyRange`) has not its bytes yet.
            if f.copiedFrom != nil {
                try await prepareForWriting(handle: handle)
                return try await setSize(id, size, handle: handle)
            }
            guard f.writable else { throw error(.denied, id, "not open for writing") }
            let (deleted, stale) = f.entry.withLock { (f.entry.deleted, f.entry.stale) }
            if deleted {
                try content.setSize(f.entry, size)
                return orphanItem(id) ?? f.item
            }
            if stale { throw supersededError(file) }
            try checkFileSize(file, size)
            do {
                try markDirtyRecording(file, f.entry, through: f)
            } catch is NameIsNotAFileNow {
                try content.setSize(f.entry, size)
                return f.item
            }
            writeBack.streamOutOfOrder(file, "the file was truncated or extended to \(size) bytes")
            try content.setSize(f.entry, size)
            changeLanded(file)
            touch(file, size: size)
            return cachedItem(id) ?? f.item
        }
        guard let item = cachedItem(id) else { throw error(.notFound, id, "no such item") }
        guard item.kind == .file else { throw error(.isAFolder, id, "not a file") }
        let (h, _) = try await openFile(id, write: true, truncate: size == 0)
        defer { closeFile(h) }
        if size != 0 { return try await setSize(id, size, handle: h) }
        return cachedItem(id) ?? item
    }

    /// Sets a file's modification time where the remote keeps it; elsewhere it is kept in the
    /// placeholder until the next listing (see docs/behaviour.md).
    public func setModified(_ id: ItemIdentifier, _ time: Timestamp) async throws -> Item {
        if let kept = try setModifiedImmediately(id, time) { return kept }
        let w = try writer(id)
        guard var item = cachedItem(id) else { throw error(.notFound, id, "no such item") }
        let before = Self.contentVersion(item)
        item.modifiedTime = time
        do {
            item = try await w.setModified(id, to: time)
            // Where a new time is a new version (SFTP, local: size and mtime), an open handle's
            // content is still that version: not a change from another client.
            content.setVersion(id, Self.contentVersion(item), ifStill: before)
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
    func keepTime(_ id: ItemIdentifier, version: String, time: Timestamp, because e: ProviderError) {
        if lock.withLock({ s in s.namespace.keepTime(id, version: version, time: time) }) {
            log.notice("\(provider.remoteDescription) does not keep modification times set here (\(e.detail)): favfs keeps them in its cache dir and shows them while a file stays unchanged at the server; another computer, or a new cache dir, sees the server's times (rsync --size-only or --checksum then avoid sending such files again)")
        }
        do { try store.keepTime(.init(id: id, version: version, time: time)) }
        catch { log.warning("cannot record the time set on \(id) in the cache dir: \(error); it shows until unmount") }
    }

    /// After the last writable handle of an item closes: record its state and upload.
    func finishWriting(_ f: OpenFile) {
        let (id, deleted) = f.entry.withLock { (f.entry.id, f.entry.deleted || f.entry.stale) }
        if deleted { return }
        // The content record and the placeholder (size, mtime) in one transaction.
        placeholders.whileNoPlaceholderIsWritten { content.persist(f.entry, with: cachedItem(id)) }
        let stillOpen = handles.hasWriter(of: f.entry)
        if !stillOpen { writeBack.endStream(id, length: f.entry.withLock { f.entry.size }) }
        if !stillOpen && isDirty(id) { writeBack.scheduleUpload(id, host: self) }
    }

    /// fsync: the cache file and its journal row on this machine's disk; the upload follows
    /// once the file goes quiet (`uploadWhenQuiet`). With `fsyncWaitsForRemote`, fsync returns
    /// only once the remote confirmed the content.
    public func sync(handle: UInt64) async throws {
        let f = try openFile(handle: handle)
        guard f.writable else { return }
        let id = f.entry.withLock { f.entry.id }
        if fdatasync(f.entry.fd) != 0 {
            throw error(.localIO, id, "cannot sync the cache file to disk: \(String(cString: strerror(errno)))")
        }
        // A deleted file's content lives only as long as its descriptors: nothing to upload.
        if f.entry.withLock({ f.entry.deleted }) { return }
        let dirtyNow = isDirty(id)
        // A dirty file's content is its whole cache file, whatever its record says
        // (`ContentCache.retain(local:)`): the record is written at the close (and was at the
        // first write), not at every commit of a database.
        if !dirtyNow || !f.entry.withLock({ f.entry.recorded }) { content.persist(f.entry) }
        guard dirtyNow else { return }
        if options.fsyncWaitsForRemote {
            writeBack.scheduleUpload(id, host: self)
            try await waitForUpload(id)
            return
        }
        // The journal row once per dirty spell: a database's hundredth commit syncs its cache
        // file only (a dirty file's content is the cache file, whatever its record says).
        if lock.withLock({ s in s.dirty.needsDurableJournal(id) }) {
            do {
                try store.makeDurable()
            } catch where PlaceholderStore.isDiskFull(error) && content.evictForSpace(needed: 1 << 20, except: id, for: "to sync the journal of \(id)") > 0 {
                // The checkpoint writes into the database file: clean content makes room.
                do { try store.makeDurable() } catch { throw self.error(.noSpace, id, "cannot sync the change journal to disk: \(error)") }
            } catch {
                throw self.error(PlaceholderStore.isDiskFull(error) ? .noSpace : .localIO, id, "cannot sync the change journal to disk: \(error)")
            }
            lock.withLock { s in s.dirty.journalMadeDurable(id) }
        }
        uploadWhenQuiet(id)
    }

    /// Uploads `id` once it went `uploadQuietTime` without a change since this call, or once
    /// `uploadMaxDelay` passed since it became dirty: a database fsyncing a hundred times a
    /// second is uploaded once, soon after it stops. Each call's wait ends on its own; a later
    /// change leaves the upload to the fsync (or close) after it.
    func uploadWhenQuiet(_ id: ItemIdentifier) {
        guard let (generation, since) = lock.withLock({ s in s.dirty[id].map { ($0.generation, $0.journal.since) } }) else { return }
        let quiet = options.uploadQuietTime, maxDelay = options.uploadMaxDelay
        tasks.start(priority: .utility) { [self] in
            try? await Task.sleep(nanoseconds: UInt64(max(0, quiet) * 1e9))
            if Task.isCancelled { return }
            let due = lock.withLock { s in
                s.dirty.quietUploadDue(id, generation: generation, since: since, now: Self.now, maxDelay: maxDelay)
            }
            if due { writeBack.scheduleUpload(id, host: self) }
        }
    }
}

/// `markDirty` through a handle whose file is gone at the remote and whose name is a folder now.
struct NameIsNotAFileNow: Error {}
