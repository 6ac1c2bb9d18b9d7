import CLinux
import Foundation

/// stopProviding: least recently used clean content goes when the cache is past its limit or
/// the cache disk is full; never open, pinned, dirty or downloading content.
extension ContentCache {
    /// Runs `evictIfNeeded` in the background, off the reader's path. Calls while a run is
    /// pending fold into it, so a burst of downloads or closes costs one pass.
    func scheduleEviction() {
        let start = lock.withLock { () -> Bool in
            if evictionPending { return false }
            evictionPending = true
            return true
        }
        guard start else { return }
        passes.start(priority: .utility) { [self] in
            // At most one pass per `evictionInterval`: a pass sums the whole content table,
            // and `cp -r` of thousands of files closes one every few hundred microseconds.
            let wait = lock.withLock { lastEviction + Self.evictionInterval - Date().timeIntervalSince1970 }
            if wait > 0 { try? await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
            if Task.isCancelled { return }
            // Cleared first: a change made while this pass runs schedules the next one.
            lock.withLock {
                evictionPending = false
                lastEviction = Date().timeIntervalSince1970
            }
            evictIfNeeded()
        }
    }

    /// Sets how pinned items are told apart (once, by the domain).
    func setPinnedCheck(_ check: @escaping @Sendable (ItemIdentifier) -> Bool) { lock.withLock { pinnedCheck = check } }

    /// Pinned content: never evicted, and not counted against `limit`.
    func isPinned(_ r: PlaceholderStore.ContentRecord) -> Bool {
        r.pinned || (lock.withLock { pinnedCheck }?(r.id) ?? false)
    }

    /// Evicts least recently used content until the cache is within `limit` (pinned content
    /// does not count).
    public func evictIfNeeded() {
        guard let total = try? store.contentBytes(), total > limit else { return }
        let records = (try? store.contentByLastUse()) ?? []
        let pinned = records.filter(isPinned)
        var excess = total - pinned.reduce(0) { $0 + $1.ranges.count } - limit
        guard let dirty = dirtyItems() else { return }
        for r in records where excess > 0 {
            if isPinned(r) || r.ranges.isEmpty || dirty.contains(r.id) { continue }
            if evict(r) { excess -= r.ranges.count }
        }
    }

    /// The cache disk is full: evicts least recently used clean content (not pinned, not
    /// dirty, not in use, not `except`) until about twice `needed` bytes are freed, and says so
    /// in the log (`purpose`: what the space is for). Returns the bytes freed.
    func evictForSpace(needed: Int64, except: ItemIdentifier, for purpose: String) -> Int64 {
        var freed: Int64 = 0
        guard let dirty = dirtyItems() else { return 0 }
        for r in (try? store.contentByLastUse()) ?? [] where freed < 2 * max(needed, chunkSize) {
            if isPinned(r) || r.ranges.isEmpty || dirty.contains(r.id) || r.id == except { continue }
            if evict(r) { freed += r.ranges.count }
        }
        if freed > 0 { log.warning("the cache disk is full: evicted \(freed) bytes of least recently used content \(purpose)") }
        return freed
    }

    /// stopProviding: drops the cached content of one item (not if open, pinned or downloading,
    /// nor dirty). `r` may be older than the item's state now (a pass's list, read once): a file
    /// written and closed since is dirty, and its cache file the only copy of what was written.
    /// The journal is read under this cache's lock, which a write needs first (`retain`).
    @discardableResult
    func evict(_ r: PlaceholderStore.ContentRecord) -> Bool {
        evictUnlessDirty(r) == .evicted
    }

    /// What `evictUnlessDirty` did with an item's content. `alreadyGoing`: another pass (or a
    /// removal) is deleting it right now; the space it frees is not this caller's to count
    /// (counted twice, a reader short of disk stopped evicting before enough was free).
    enum FreeingOutcome: Equatable { case evicted, open, downloading, notUploaded, alreadyGoing }

    /// Free up space for one item: drops its cached content unless a handle or a download uses
    /// it, or it is dirty (the only copy). Both are checked under this cache's lock, which a
    /// write needs first (`retain`): content found clean here cannot turn dirty before it goes.
    func evictUnlessDirty(_ r: PlaceholderStore.ContentRecord) -> FreeingOutcome {
        let outcome = lock.withLock { () -> FreeingOutcome in
            if let e = entries[r.id], let busy = e.withLock({ e.users > 0 ? e.openHandles > 0 : nil }) {
                return busy ? .open : .downloading
            }
            // Deleted meanwhile (`r` is from a list read before), or being deleted right now.
            if recordsGoing.contains(r.id) || (try? store.contentRecord(r.id))?.file != r.file { return .alreadyGoing }
            // Unreadable journal: anything could be dirty.
            guard (try? store.hasJournal(r.id)) == false else { return .notUploaded }
            recordsGoing.insert(r.id)
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
        unlink(path(file))
        try? store.deleteContent(id, file: file)
        lock.withLock { _ = recordsGoing.remove(id) }
    }

    /// Drops content cached for another version than `version` (the remote has a new one)
    /// unless something uses it (a handle or a download) or it was changed here (a journal
    /// row: the only copy, whatever version it is recorded under), both checked under the lock
    /// a write's open and a rename's record move take. It would never be served again and
    /// only takes disk.
    func dropOutdated(_ id: ItemIdentifier, version: String) {
        let file = lock.withLock { () -> String? in
            if let e = entries[id], e.withLock({ e.users > 0 }) { return nil }
            guard let r = try? store.contentRecord(id), r.version != version else { return nil }
            guard (try? store.hasJournal(id)) == false else { return nil }
            entries[id] = nil
            recordsGoing.insert(id)
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
        lock.withLock {
            entries.values.contains { e in
                e.withLock {
                    e.id.isAtOrBelow(id) && e.openHandles == 0
                        && (!e.inflight.isEmpty || e.recordBehind)
                }
            }
        }
    }

    /// Cancels the eviction pass waiting to run and waits for one running (`scheduleEviction`);
    /// none starts after. Before `evictAll` and the store's close at unmount.
    public func stopEvicting(within seconds: Double) async -> Int {
        await passes.shutdown(within: seconds)
    }

    /// The downloads running now, of every entry (`Downloads.stop` cancels them at unmount).
    func downloadsInFlight() -> [Task<Void, Error>] {
        lock.withLock { entries.values.flatMap { e in e.withLock { Array(e.inflight.values) } } }
    }

    /// Evicts everything that is not pinned, dirty or in use (unmount). Returns files and bytes freed.
    public func evictAll() -> (files: Int, bytes: Int64) {
        var files = 0, bytes: Int64 = 0
        guard let dirty = dirtyItems() else { return (0, 0) }
        for r in (try? store.contentByLastUse()) ?? [] where !isPinned(r) && !dirty.contains(r.id) {
            if evict(r) { files += 1; bytes += r.ranges.count }
        }
        files += rescueUnknownFiles()
        return (files, bytes)
    }
}
