import Foundation

/// Write-back: a dirty item's cache file is uploaded with the version it was based on. The
/// journal row goes only once the remote confirmed; a remote change meanwhile never overwrites
/// the remote — the local content is uploaded beside it as a conflict copy.
extension Domain {
    /// Starts uploading `id` unless an upload of it is already running (which will notice the
    /// newer generation and go again).
    func scheduleUpload(_ id: ItemIdentifier) {
        // Refused content waits for a change (markDirty clears it): the server said no.
        let claimed = lock.withLock { s in s.dirty.claimUpload(id) ? s.dirty[id]?.incarnation : nil }
        guard let claimed else { return }
        // Unmounting (no new work): the item stays dirty in the journal for the next mount.
        if !tasks.start({ [self] in await uploadLoop(id, incarnation: claimed) }) { _ = lock.withLock { s in s.dirty.releaseClaim(id) } }
    }

    /// Uploads every item the journal lists (after a crash or kill, at mount).
    public func resumeUploads() {
        let rows = (try? store.journalEntries()) ?? []
        lock.withLock { s in
            for j in rows {
                let failure = j.refused.map {
                    ProviderError(ProviderError.Kind(rawValue: $0) ?? .denied, remote: provider.remoteDescription,
                                  path: j.id.rawValue, detail: j.lastError ?? "refused by the server")
                }
                s.dirty.resume(j, failure: failure)
            }
        }
        // The placeholders may predate the last writes (a crash before close): sizes from the files.
        for j in rows {
            guard var item = cachedItem(j.id), let (fd, length) = try? content.openForUpload(j.id) else { continue }
            close(fd)
            if item.size != length { item.size = length; setPlaceholder(item) }
        }
        let refused = rows.filter { $0.refused != nil }.count
        if rows.count > refused { log.info("resuming \(rows.count - refused) pending upload(s) from the journal") }
        if refused > 0 { log.warning("\(refused) file(s) the server refused stay here until changed or removed (favfs status shows them)") }
        for j in rows { scheduleUpload(j.id) }
    }

    /// Uploads `id` until it is clean, it fails, or its dirty spell ends. `incarnation`: the
    /// spell this loop was claimed for (nil: the one there now). A file deleted and made again
    /// meanwhile is another spell, with a loop of its own: two loops uploading one name at once
    /// made each other's uploads look like remote changes (conflict copies of sqlite's journal).
    func uploadLoop(_ id: ItemIdentifier, incarnation: Int? = nil) async {
        var attempt = 0
        var recreatedFolders = false
        var mine = incarnation
        while true {
            guard let (journal, generation, spell) = lock.withLock({ s in s.dirty[id].map { ($0.journal, $0.generation, $0.incarnation) } }) else { return }
            if mine == nil { mine = spell }
            guard spell == mine else {
                log.debug("upload of \(id) ends: the file was deleted and made again (its own upload follows)")
                return
            }
            guard let item = cachedItem(id), item.kind == .file, let w = try? writer(id) else {
                finishFailed(id, error(.notFound, id, "the item to upload is gone"))
                return
            }
            let precondition: UploadPrecondition = journal.isNew ? .mustNotExist
                : journal.baseVersion.map { .mustMatch($0) } ?? .none
            log.debug("upload \(id) generation=\(generation) precondition=\(precondition)")
            do {
                let (fd, length) = try content.openForUpload(id)
                defer { close(fd) }
                let uploaded = try await content.transfers.track(id, .upload, total: length) {
                    try await w.upload(id, from: ContentSource(fd: fd, length: length), precondition: precondition)
                }
                let (final, time) = await applyPendingTime(id, to: uploaded, with: w)
                if await commit(id, uploaded: final, generation: generation, timeApplied: time) { return }
                attempt = 0 // changed meanwhile: upload again, now based on what we just sent
            } catch let e as ProviderError where e.kind == .versionChanged || (e.kind == .exists && journal.isNew) {
                // The server may hold these very bytes already (an upload confirmed just
                // before a kill, whose journal update was lost): then it is done, not a conflict.
                let same: Item?
                do {
                    same = try await remoteItemWithSameContent(id)
                } catch {
                    // The comparison itself failed (the server in trouble): not a conflict yet.
                    attempt += 1
                    if await backOff(id, journal: journal, attempt: attempt, after: error) { continue }
                    return
                }
                if let same {
                    log.info("\(id): the server already has this content (\(e.detail)); recorded as uploaded, no conflict copy")
                    if await commit(id, uploaded: same, generation: generation) { return }
                    continue
                }
                await saveConflictCopy(id, item: item, cause: e, generation: generation)
                return
            } catch where Task.isCancelled {
                // Unmounting: not the server's answer. The content stays dirty in the journal.
                finishFailed(id, self.error(.cancelled, id, "the upload was stopped by the unmount"))
                return
            } catch let e as ProviderError where e.isTransient {
                attempt += 1
                if await backOff(id, journal: journal, attempt: attempt, after: e) { continue }
                return
            } catch where lock.withLock({ s in s.dirty.changed(id, since: generation) }) {
                // The file changed under the upload (a truncate made it read short): go again.
                log.debug("upload of \(id) raced a local change (\(error)); again")
            } catch let e as ProviderError where e.kind == .notFound && !recreatedFolders {
                // The folder was deleted on the server: put it back, the file stays where it is.
                recreatedFolders = true
                do {
                    if try await recreateMissingFolders(above: id) { continue }
                } catch {
                    // The server failed while the folders were put back: not a refusal.
                    recreatedFolders = false
                    attempt += 1
                    if await backOff(id, journal: journal, attempt: attempt, after: error as? ProviderError ?? e) { continue }
                    return
                }
                await abandonUpload(id, e)
                return
            } catch let e as ProviderError where !e.isPermanentRefusal {
                // The cache disk, a cancelled task, a reply we could not read: the content
                // stays dirty where it is and is tried again on the next change, fsync or mount.
                var j = journal
                j.attempts += 1
                j.lastError = e.description
                try? store.saveJournal(j)
                log.error("upload of \(id) failed: \(e); the local content is kept in the cache")
                finishFailed(id, e)
                return
            } catch {
                // Denied, no space at the server, too large, a name it refuses: retrying would
                // give the same answer. The content goes to lost+found.
                await abandonUpload(id, error as? ProviderError ?? self.error(.serverError, id, "\(error)"))
                return
            }
        }
    }

    /// After a transient failure: records it in the journal and waits before the next attempt.
    /// False when the attempts are used up (the upload is then marked failed): bounded, so a
    /// server that keeps failing keeps neither this loop nor unmount (which waits for it) going
    /// forever. The content stays dirty; the poller tries it again (`retryFailedUploads`), as
    /// do the next change and the next mount.
    private func backOff(_ id: ItemIdentifier, journal: PlaceholderStore.JournalEntry, attempt: Int, after e: ProviderError) async -> Bool {
        var j = journal
        j.attempts += 1
        j.lastError = e.description
        try? store.saveJournal(j)
        lock.withLock { s in s.dirty.attempted(id, j) }
        let limit = lock.withLock { s in s.dirty.draining } ? options.maxUploadAttemptsWhileUnmounting : options.maxUploadAttempts
        if attempt >= limit || Task.isCancelled {
            log.error("upload of \(id) failed \(attempt) times (last: \(e)); the local content is kept in the cache and tried again later")
            finishFailed(id, e)
            return false
        }
        let delay = min(options.maxUploadBackoff, 0.5 * pow(2, Double(min(attempt, 10))))
        log.warning("upload of \(id) failed (\(e)); retrying in \(delay) s (attempt \(attempt) of \(limit))")
        try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
        return true
    }

    /// A time set while the upload ran (`cp -p`, rsync's utimensat before its rename), applied
    /// before the upload is recorded: the item is still dirty meanwhile, so a rename waiting
    /// for it moves the file only once the time is set (applied after the commit, it went to
    /// the old name: rsync sent such files again). Returns the item to record (with the
    /// remote's new version where a time is part of it: SFTP, local) and the time applied.
    private func applyPendingTime(_ id: ItemIdentifier, to uploaded: Item, with w: any WritableProvider) async -> (Item, Timestamp?) {
        guard let time = lock.withLock({ s in s.dirty[id]?.pendingModified }) else { return (uploaded, nil) }
        do {
            var updated = try await w.setModified(id, to: time)
            updated.kind = .file
            return (updated, time)
        } catch let e as ProviderError where e.kind == .notSupported {
            // Kept here, bound to what was just uploaded (without a version: after the commit).
            guard let version = uploaded.contentTag else { return (uploaded, nil) }
            keepTime(id, version: version, time: time, because: e)
            var item = uploaded
            item.modifiedTime = time
            return (item, time)
        } catch {
            log.warning("cannot set the modification time of \(id) after its upload: \(error); tried again after it is recorded")
            return (uploaded, nil)
        }
    }

    /// Records a confirmed upload. True when the item is clean; false when it changed meanwhile.
    /// `timeApplied`: the pending time the caller already set (`applyPendingTime`).
    func commit(_ id: ItemIdentifier, uploaded: Item, generation: Int, timeApplied: Timestamp? = nil) async -> Bool {
        var item = uploaded
        item.kind = .file
        if item.version == nil, let fresh = try? await provider.item(for: id) { item.version = fresh.version; item.modified = fresh.modified }
        let version = Self.contentVersion(item)
        // The item is clean only if no change came since this upload started. Three steps, so
        // that no FUSE request waits for SQLite's writer behind `Domain.lock`: claim the commit
        // (a change from now on saves a row of its own, see `DirtySet.beginCommit`), write
        // the store without the lock, then change memory — placeholder, content version and
        // dirty state together, under the lock `openFile` reads them under, so an open never
        // sees "clean" with the old content version (it would discard the cache file an upload
        // may still be reading), and a write right after dirties it with the right base.
        if let parent = id.parent { preload(parent) }
        let begun: DirtyState? = lock.withLock { s in
            guard let d = s.dirty.beginCommit(id, generation: generation, version: item.version) else { return nil }
            item = withFirstSeenTimeLocked(&s, item)
            return d
        }
        var recorded = false
        if let begun {
            do {
                // The journal row goes only if it is still the one this upload answered.
                try store.commitUpload(item, contentVersion: version, journalSince: begun.journal.since)
                recorded = true
            } catch {
                log.error("cannot record the upload of \(id): \(error)")
            }
        }
        // A time set while the upload ran and not applied before it was recorded (`cp -p`,
        // rsync's utimensat just before its rename): applied before the item counts as clean,
        // so a rename waiting for the upload moves the file only once it has its time (applied
        // after, it raced rsync's rename of its temporary file and went to a name that no
        // longer existed: rsync sent the file again).
        var applied = timeApplied
        var lateTimeSet = false
        var state: DirtyState?
        while true {
            enum Step { case done(DirtyState?), lateTime(Timestamp) }
            let step: Step = lock.withLock { s in
                guard recorded, s.dirty.unchanged(id, generation: generation) != nil else {
                    s.dirty.endCommit(id)
                    return .done(nil)
                }
                if let m = s.dirty[id]?.pendingModified, m != applied { return .lateTime(m) }
                content.setVersion(id, Self.contentVersion(item))
                // Noted: a listing begun before this upload must not bring back the old version.
                s.namespace.replaceIfListed(item, noting: true)
                handles.forgetOpenedVersion(id)
                return .done(s.dirty.confirmed(id))
            }
            guard case .lateTime(let m) = step else {
                if case .done(let s) = step { state = s }
                break
            }
            if let updated = await applyLateTime(id, m, to: item) { item = updated; lateTimeSet = true }
            applied = m
        }
        if let state {
            // Its new time (and, where a time is part of it, version) in the store too.
            if lateTimeSet { setPlaceholder(item) }
            for waiter in state.waiters { waiter.resume() }
            log.info("uploaded \(id) (\(item.size) bytes, version \(item.version ?? "-"))")
            return true
        }
        // Newer local changes: they are now based on the version just uploaded. Who waited for
        // what this upload sent is answered now.
        log.debug("uploaded \(id) but it changed meanwhile: again, based on \(item.version ?? "-")")
        let (answered, journal) = lock.withLock { s in s.dirty.confirmedButChanged(id, generation: generation, version: item.version) }
        for waiter in answered { waiter.resume() }
        if let journal { try? store.saveJournal(journal) }
        return false
    }

    /// A time set while the upload ran and not applied before it was recorded: set at the
    /// remote now, while the item still counts as uploading, with a few tries for a transient
    /// failure (a lost time makes `rsync -a` send the file again). Returns the item with its
    /// new time (and version, where a time is part of it), or nil when it was not set; a time
    /// the remote refuses for good is logged, never silently dropped.
    private func applyLateTime(_ id: ItemIdentifier, _ time: Timestamp, to item: Item) async -> Item? {
        guard let w = try? writer(id) else { return nil }
        for attempt in 1...3 {
            do {
                var updated = try await w.setModified(id, to: time)
                updated.kind = .file
                return updated
            } catch let e as ProviderError where e.kind == .notSupported {
                // Kept here, bound to what was just uploaded.
                guard let version = item.contentTag else { return nil }
                keepTime(id, version: version, time: time, because: e)
                var kept = item
                kept.modifiedTime = time
                return kept
            } catch let e as ProviderError where e.isTransient && attempt < 3 {
                try? await Task.sleep(nanoseconds: UInt64(attempt) * 500_000_000)
            } catch {
                log.warning("cannot set the modification time of \(id) after its upload: \(error); the server keeps the time of the upload")
                return nil
            }
        }
        return nil
    }

    func finishFailed(_ id: ItemIdentifier, _ e: ProviderError) {
        let waiters = lock.withLock { s in s.dirty.failed(id, e) }
        for w in waiters { w.resume(throwing: e) }
    }

    /// The conflict copy's name for `name` (exposed for tests).
    public static func conflictNameForTests(_ name: String, date: Date) -> String { conflictName(name, date: date, attempt: 0) }

    /// `NAME (conflict YYYY-MM-DD HHMMSS).EXT`
    static func conflictName(_ name: String, date: Date, attempt: Int) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone.current
        f.dateFormat = "yyyy-MM-dd HHmmss"
        let tag = "conflict \(f.string(from: date))" + (attempt > 0 ? " \(attempt + 1)" : "")
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return "\(name[..<dot]) (\(tag))\(name[dot...])"
        }
        return "\(name) (\(tag))"
    }

    /// The remote changed under a local edit: upload ours beside it, keep theirs under the name.
    /// `generation`: the dirty state's generation when this upload began.
    private func saveConflictCopy(_ id: ItemIdentifier, item: Item, cause: ProviderError, generation: Int) async {
        guard let parent = id.parent, let w = try? writer(id) else { return }
        let now = Date()
        var attempt = 0
        var recreatedFolders = false
        var saved: Item?
        // A server in trouble: waited for and tried again, as often as any upload (bounded; then
        // the edit stays dirty here and the poller, the next change or mount try again).
        var failures = 0
        func again(after e: ProviderError) async -> Bool {
            failures += 1
            guard let journal = lock.withLock({ s in s.dirty[id]?.journal }) else { return false }
            return await backOff(id, journal: journal, attempt: failures, after: e)
        }
        while saved == nil {
            let copyId = parent.child(Self.conflictName(id.name, date: now, attempt: attempt))
            do {
                let (fd, length) = try content.openForUpload(id)
                defer { close(fd) }
                var copy = try await w.upload(copyId, from: ContentSource(fd: fd, length: length), precondition: .mustNotExist)
                copy.kind = .file
                setPlaceholder(copy)
                log.warning("conflict: \(id) changed on \(provider.remoteDescription) while edited here (\(cause.detail)); the remote version keeps the name, the local one was saved as \(copyId.name)")
                saved = copy
            } catch let e as ProviderError where e.kind == .exists && attempt < 20 {
                attempt += 1
            } catch where Task.isCancelled {
                finishFailed(id, self.error(.cancelled, id, "the conflict copy was stopped by the unmount"))
                return
            } catch let e as ProviderError where e.isTransient {
                if await again(after: e) { continue }
                return
            } catch let e as ProviderError where e.kind == .notFound && !recreatedFolders {
                recreatedFolders = true
                do {
                    if try await recreateMissingFolders(above: copyId) { continue }
                } catch {
                    recreatedFolders = false
                    if await again(after: error as? ProviderError ?? e) { continue }
                    return
                }
                await abandonUpload(id, e)
                return
            } catch let e as ProviderError where !e.isPermanentRefusal {
                log.error("cannot save the conflict copy of \(id): \(e); the local content stays in the cache")
                finishFailed(id, e)
                return
            } catch {
                log.error("cannot save the conflict copy of \(id): \(error)")
                await abandonUpload(id, error as? ProviderError ?? self.error(.serverError, id, "\(error)"))
                return
            }
        }
        guard let saved else { return }
        // The name's remote version, read before the edit leaves the name: the name shows it
        // from the same step on (in between, a reader got the local size without local bytes).
        let remote: Result<Item, Error>
        do { remote = .success(try await provider.item(for: id)) } catch { remote = .failure(error) }
        if let e = handEditToConflictCopy(id, copy: saved, generation: generation, name: try? remote.get()) {
            log.error("cannot record the conflict copy of \(id) as \(saved.identifier.name): \(e); the local content stays in the cache and is sent again")
            finishFailed(id, self.error(.localIO, id, "cannot record the conflict copy: \(e)"))
            return
        }
        userEvents.publish(.conflictCopy(original: id, copy: saved.identifier))
        switch remote {
        case .success: break
        case .failure(let e as ProviderError) where e.kind == .notFound: forgetSubtree(id)
        case .failure(let e): log.warning("cannot refresh \(id): \(e)")
        }
    }

    /// The local edit is the conflict copy's now: its cached content, the open handles on it
    /// (their later writes update the copy, not the name that went to the other version) and,
    /// when it changed while the copy was sent, its dirty state, uploaded again against the
    /// copy; the name takes the remote's item (`name`, when it could be read). Store and memory
    /// change together under the lock `markDirty` and `openFile` read the dirty state under (as
    /// in `commit`): no write lands between the journal row going and the content going, where
    /// it would be lost. Returns the store's error, if any.
    private func handEditToConflictCopy(_ id: ItemIdentifier, copy: Item, generation: Int, name: Item?) -> Error? {
        let copyId = copy.identifier
        let version = Self.contentVersion(copy)
        let outcome = lock.withLock { s -> Result<(answered: [UploadWaiter], again: Bool), Error> in
            guard let d = s.dirty[id] else { return .success(([], false)) }
            let changed = d.generation != generation
            let nameItem = name.map { s.namespace.withKeptTime($0) }
            do {
                // Still under the lock, unlike an upload's commit: the open handles' entry moves
                // to the copy in the same step as the rows (a conflict is rare).
                try StoreWitness.allowing("handing an edit to its conflict copy") {
                    try content.move(id, to: copyId, version: version) {
                        try store.moveEditToConflictCopy(id, copy: copy, contentVersion: version, name: nameItem,
                                                         journalSince: d.journal.since, stillDirty: changed)
                    }
                }
            } catch {
                return .failure(error)
            }
            handles.forgetOpenedVersion(id)
            if let nameItem { s.namespace.replaceIfListed(nameItem) }
            // Waiters for what the copy holds (and for the name to be clean) are answered; an
            // fsync of a later change waits for the copy's upload (the row moved in the store,
            // now based on the copy).
            return .success(s.dirty.handedToConflictCopy(id, copy: copyId, copyVersion: copy.version, generation: generation))
        }
        switch outcome {
        case .failure(let e): return e
        case .success(let (answered, again)):
            for w in answered { w.resume() }
            if again { scheduleUpload(copyId) }
            return nil
        }
    }

    /// Waits for a running upload of `id`, if any (errors ignored: the caller acts either way).
    func waitIfUploading(_ id: ItemIdentifier) async {
        guard lock.withLock({ s in s.dirty.isUploading(id) }) else { return }
        try? await waitForUpload(id, untilClean: true)
    }

    /// Waits until the remote confirmed `id`'s content as it is now (changes made after this call
    /// are not waited for: fsync), or, `untilClean`, until no upload of it is left at all (before
    /// a rename or delete, which must not race an upload still running). Returns at once for an
    /// item that was dropped. Throws the upload's permanent failure.
    /// Call after `scheduleUpload` (or a close that schedules it).
    public func waitForUpload(_ id: ItemIdentifier, untilClean: Bool = false) async throws {
        // A stream would wait for the writer's close: the content as it is now goes whole instead.
        streamOutOfOrder(id, "an fsync, rename or delete waits for the upload", uploadNow: true)
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            let immediate = lock.withLock { s in
                s.dirty.wait(id, untilClean: untilClean) { UploadWaiter(generation: $0, continuation: c) }
            }
            if let immediate { c.resume(with: immediate) }
        }
    }

    /// Uploads everything dirty at or below `id` and waits for it (before a rename).
    func flushUploads(under id: ItemIdentifier) async throws {
        let ids = lock.withLock { s in s.dirty.ids(atOrUnder: id) }
        for d in ids { scheduleUpload(d) }
        for d in ids { try await waitForUpload(d, untilClean: true) }
    }

    /// Starts again the uploads that stopped on a transient failure (the server was down or
    /// kept failing): called by the poller, so they resume once the server answers again.
    func retryFailedUploads() {
        let ids = lock.withLock { s in s.dirty.transientlyFailed }
        for id in ids { scheduleUpload(id) }
    }

    /// Uploads still pending: how many items and bytes, and those that failed (tried again at
    /// the next change, fsync or mount). Content the server refused is not pending: see
    /// `refusedUploads`.
    public func pendingUploads() -> (items: Int, bytes: Int64, failed: [ProviderError]) {
        let snapshot = lock.withLock { s in s.dirty.pending }
        let bytes = snapshot.keys.reduce(Int64(0)) { $0 + (cachedItem($1)?.size ?? 0) }
        return (snapshot.count, bytes, snapshot.values.compactMap { $0.uploading ? nil : $0.failure })
    }

    /// Files the server refused for good (too large, denied...): kept in the mount and in
    /// lost+found until changed or removed.
    public func refusedUploads() -> [ProviderError] {
        lock.withLock { s in s.dirty.refusals }
    }

    /// Starts every pending upload and waits until none is left or only failed ones remain
    /// (unmount). `progress` is called about every half second.
    public func drainUploads(progress: @Sendable (Int, Int64) -> Void) async -> [ProviderError] {
        lock.withLock { s in s.dirty.draining = true }
        defer { lock.withLock { s in s.dirty.draining = false } }
        for id in lock.withLock({ s in s.dirty.ids }) {
            streamOutOfOrder(id, "unmounting", uploadNow: true)
            scheduleUpload(id)
        }
        while true {
            let (items, bytes, failed) = pendingUploads()
            if items == 0 { return [] }
            if failed.count == items || Task.isCancelled { return failed }
            progress(items, bytes)
            try? await Task.sleep(nanoseconds: 500_000_000)
        }
    }
}
