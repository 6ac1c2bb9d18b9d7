import Foundation

/// The upload loop: a dirty item's content goes with the version it was based on, is retried
/// with a bounded back-off on transient failures, and is recorded (`commit`) only once the
/// remote confirmed it.
extension WriteBack {
    /// Uploads `id` until it is clean, it fails, or its dirty spell ends. `incarnation`: the
    /// spell this loop was claimed for (nil: the one there now). A file deleted and made again
    /// meanwhile is another spell, with a loop of its own: two loops uploading one name at once
    /// made each other's uploads look like remote changes (conflict copies of sqlite's journal).
    func uploadLoop(_ id: ItemIdentifier, incarnation: Int? = nil, host: any WriteBackHost) async {
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
            guard let item = placeholders.cachedItem(id), item.kind == .file, let w = try? host.writer(id) else {
                failures.finishFailed(id, error(.notFound, id, "the item to upload is gone"))
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
                let (final, time) = await applyPendingTime(id, to: uploaded, with: w, host: host)
                if await commit(id, uploaded: final, generation: generation, timeApplied: time, host: host) { return }
                attempt = 0 // changed meanwhile: upload again, now based on what we just sent
            } catch let e as ProviderError where e.kind == .versionChanged || (e.kind == .exists && journal.isNew) {
                // The server may hold our own bytes: these very ones (an upload confirmed just
                // before a kill, whose journal update was lost), or what an earlier attempt sent
                // whose answer was lost, with changes made here since. Then it is no conflict.
                let ours: (item: Item, generation: Int, lostAnswer: Bool)?
                do {
                    if let same = try await sameContent.remoteItemWithSameContent(id) { ours = (same, generation, false) }
                    else { ours = try await sameContent.remoteItemFromLostReply(id).map { ($0.item, $0.generation, true) } }
                } catch {
                    // The comparison itself failed (the server in trouble): not a conflict yet.
                    attempt += 1
                    if await failures.backOff(id, journal: journal, attempt: attempt, after: error) { continue }
                    return
                }
                if let ours {
                    log.info(ours.lostAnswer
                        ? "\(id): the server has what an earlier upload sent, whose answer was lost (\(e.detail)); recorded as uploaded, the newer change goes on top"
                        : "\(id): the server already has this content (\(e.detail)); recorded as uploaded, no conflict copy")
                    if await commit(id, uploaded: ours.item, generation: ours.generation, host: host) { return }
                    continue
                }
                if let copy = await conflicts.saveConflictCopy(id, item: item, cause: e, generation: generation, host: host) {
                    scheduleUpload(copy, host: host)
                }
                return
            } catch where Task.isCancelled {
                // Unmounting: not the server's answer. The content stays dirty in the journal.
                failures.finishFailed(id, self.error(.cancelled, id, "the upload was stopped by the unmount"))
                return
            } catch let e as ProviderError where e.isTransient {
                // Hashing what was sent reads the file: not on the cooperative pool.
                _ = try? await BlockingWork.run { [self] in sameContent.noteLostReply(id, generation: generation) }
                attempt += 1
                if await failures.backOff(id, journal: journal, attempt: attempt, after: e) { continue }
                return
            } catch where lock.withLock({ s in s.dirty.changed(id, since: generation) }) {
                // The file changed under the upload (a truncate made it read short): go again.
                log.debug("upload of \(id) raced a local change (\(error)); again")
            } catch let e as ProviderError where e.kind == .notFound && !recreatedFolders {
                // The folder was deleted on the server: put it back, the file stays where it is.
                recreatedFolders = true
                do {
                    if try await failures.recreateMissingFolders(above: id, host: host) { continue }
                } catch {
                    // The server failed while the folders were put back: not a refusal.
                    recreatedFolders = false
                    attempt += 1
                    if await failures.backOff(id, journal: journal, attempt: attempt, after: error as? ProviderError ?? e) { continue }
                    return
                }
                await failures.abandonUpload(id, e, host: host)
                return
            } catch let e as ProviderError where !e.isPermanentRefusal {
                // The cache disk, a cancelled task, a reply we could not read: the content
                // stays dirty where it is and is tried again on the next change, fsync or mount.
                var j = journal
                j.attempts += 1
                j.lastError = e.description
                try? store.saveJournal(j)
                log.error("upload of \(id) failed: \(e); the local content is kept in the cache")
                failures.finishFailed(id, e)
                return
            } catch {
                // Denied, no space at the server, too large, a name it refuses: retrying would
                // give the same answer. The content goes to lost+found.
                await failures.abandonUpload(id, error as? ProviderError ?? self.error(.serverError, id, "\(error)"), host: host)
                return
            }
        }
    }

    /// A time set while the upload ran (`cp -p`, rsync's utimensat before its rename), applied
    /// before the upload is recorded: the item is still dirty meanwhile, so a rename waiting
    /// for it moves the file only once the time is set (applied after the commit, it went to
    /// the old name: rsync sent such files again). Returns the item to record (with the
    /// remote's new version where a time is part of it: SFTP, local) and the time applied.
    private func applyPendingTime(_ id: ItemIdentifier, to uploaded: Item, with w: any WritableProvider, host: any WriteBackHost) async -> (Item, Timestamp?) {
        guard let time = lock.withLock({ s in s.dirty[id]?.pendingModified }) else { return (uploaded, nil) }
        do {
            var updated = try await w.setModified(id, to: time, current: uploaded)
            updated.kind = .file
            return (updated, time)
        } catch let e as ProviderError where e.kind == .notSupported {
            // Kept here, bound to what was just uploaded (without a version: after the commit).
            guard let version = uploaded.contentTag else { return (uploaded, nil) }
            host.keepTime(id, version: version, time: time, because: e)
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
    func commit(_ id: ItemIdentifier, uploaded: Item, generation: Int, timeApplied: Timestamp? = nil, host: any WriteBackHost) async -> Bool {
        var item = uploaded
        item.kind = .file
        if item.version == nil, let fresh = try? await provider.item(for: id) { item.version = fresh.version; item.modified = fresh.modified }
        let version = Domain.contentVersion(item)
        // The item is clean only if no change came since this upload started. Three steps, so
        // that no FUSE request waits for SQLite's writer behind `Domain.lock`: claim the commit
        // (a change from now on saves a row of its own, see `DirtySet.beginCommit`), write
        // the store without the lock, then change memory — placeholder, content version and
        // dirty state together, under the lock `openFile` reads them under, so an open never
        // sees "clean" with the old content version (it would discard the cache file an upload
        // may still be reading), and a write right after dirties it with the right base.
        if let parent = id.parent { placeholders.preload(parent) }
        let begun: DirtyState? = lock.withLock { s in
            guard let d = s.dirty.beginCommit(id, generation: generation, version: item.version) else { return nil }
            item = placeholders.withFirstSeenTimeLocked(&s, item)
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
                content.setVersion(id, Domain.contentVersion(item))
                // Noted: a listing begun before this upload must not bring back the old version.
                s.namespace.replaceIfListed(item, noting: true)
                handles.forgetOpenedVersion(id)
                return .done(s.dirty.confirmed(id))
            }
            guard case .lateTime(let m) = step else {
                if case .done(let s) = step { state = s }
                break
            }
            if let updated = await applyLateTime(id, m, to: item, host: host) { item = updated; lateTimeSet = true }
            applied = m
        }
        if let state {
            // Its new time (and, where a time is part of it, version) in the store too.
            if lateTimeSet { placeholders.setPlaceholder(item, persist: true) }
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
    private func applyLateTime(_ id: ItemIdentifier, _ time: Timestamp, to item: Item, host: any WriteBackHost) async -> Item? {
        guard let w = try? host.writer(id) else { return nil }
        for attempt in 1...3 {
            do {
                var updated = try await w.setModified(id, to: time, current: item)
                updated.kind = .file
                return updated
            } catch let e as ProviderError where e.kind == .notSupported {
                // Kept here, bound to what was just uploaded.
                guard let version = item.contentTag else { return nil }
                host.keepTime(id, version: version, time: time, because: e)
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
}
