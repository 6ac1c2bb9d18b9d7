import Foundation

/// Change detection in the background: every `pollInterval` the folders in use are listed again
/// (or first asked for a cheap stamp), and what changed reaches the placeholders, the content
/// cache and the kernel (`applyRemoteChanges`). "In use" is the working set: folders listed or
/// looked into recently (a file manager showing them), folders holding open files, pinned folders.
extension Domain {
    /// Folders count as in use for this long after they were last listed or looked into.
    static let recentUseWindow: Double = 600
    /// At most this many recently used folders are polled (the most recent ones): a `find` over
    /// a big tree must not turn into a listing of every folder every 15 seconds.
    static let maxRecentFolders = 64
    /// Folders of at least this many entries are polled less often when their listing is slow.
    static let longListing = 1000
    /// Stamp-checked folders are listed in full every this many rounds anyway.
    static let fullListingEvery = 4

    /// Starts the poller; nil when `pollInterval` is 0. Cancel the task to stop it.
    public func startPolling() -> Task<Void, Never>? {
        let interval = options.pollInterval
        guard interval > 0 else { return nil }
        (provider as? any FolderWatchingProvider)?.startWatching { [weak self] folder in self?.watchedFolderChanged(folder) }
        return Task.detached(priority: .utility) { [self] in
            var round = 0
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: UInt64(interval * 1_000_000_000))
                if Task.isCancelled { break }
                round += 1
                await poll(round: round)
            }
        }
    }

    /// The folders to revalidate now, most recently used first.
    func foldersToPoll(now: Double) -> [ItemIdentifier] {
        let recent = workingSet.recentFolders(now: now, window: Self.recentUseWindow, limit: Self.maxRecentFolders)
        return lock.withLock { s in
            var set = recent
            var seen = Set(set)
            for f in handles.all {
                if let p = f.item.identifier.parent, seen.insert(p).inserted { set.append(p) }
            }
            return set
        } + pinnedWorkingSet()
    }

    /// One round: each folder of the working set that was not listed within the last interval
    /// (a user's `ls` just did) is checked, four at a time.
    func poll(round: Int) async {
        writeBack.retryFailedUploads(host: self)
        let now = Self.now
        var unique = Set<ItemIdentifier>()
        let candidates = foldersToPoll(now: now).filter { unique.insert($0).inserted }
        if let watching = provider as? any FolderWatchingProvider {
            watching.watch(only: unique)
            // Watched folders report their changes; listing them is only the safety net
            // (unless the watch is down: then the poller is all there is).
            if watching.isWatchingLive && round % Self.fullListingEvery != 0 { return }
        }
        // Only folders this mount has loaded: never one it would have to load to check.
        let due = lock.withLock { s in
            candidates.filter { f in
                guard s.refreshes[f] == nil, let listed = s.namespace[f] else { return false }
                if let failed = listed.lastFailure, now - failed < options.retryAfterFailure { return false }
                // A folder whose listing takes long (100,000 entries: seconds) is listed at most
                // 5% of the time. Not a short one that was slow once (a loaded server or
                // machine): that would hold its changes back for 20 times that moment.
                let backOff = listed.items.count >= Self.longListing ? listed.listingSeconds * 20 : 0
                return now - (listed.listedAt ?? 0) >= max(options.pollInterval * 0.9, backOff)
            }
        }
        guard !due.isEmpty else { return }
        await withTaskGroup(of: Void.self) { group in
            var next = due.makeIterator()
            for _ in 0..<4 { if let f = next.next() { group.addTask { await self.revalidate(f, round: round) } } }
            while await group.next() != nil {
                if let f = next.next() { group.addTask { await self.revalidate(f, round: round) } }
            }
        }
    }

    /// Revalidates one folder: its stamp first where the provider has one, then the listing.
    func revalidate(_ folder: ItemIdentifier, round: Int) async {
        if let stamped = provider as? any FolderStampProvider, round % Self.fullListingEvery != 0 {
            let started = ReachabilityTracker.clock
            do {
                let stamp = try await stamped.folderStamp(of: folder)
                remoteAnswered(startedAt: started)
                if let stamp, workingSet.stampUnchanged(folder, stamp) { return }
            } catch let e as ProviderError where e.kind == .notFound {
                remoteAnswered(startedAt: started)
                folderGone(folder)
                return
            } catch {
                log.debug("poll: stamp of \(folder): \(error)")
                remoteFailed(error, startedAt: started)
                return
            }
        }
        // A folder gone at the remote is handled by the refresh itself (`folderGone`).
        _ = await lock.withLock { s in s.refreshes[folder] ?? startRefresh(&s, folder) }.result
    }

    /// A watched folder changed: list it shortly (events come in bursts: one listing for a
    /// burst), after any listing in flight, which may have missed the change.
    func watchedFolderChanged(_ folder: ItemIdentifier) {
        guard workingSet.scheduleWatchedListing(folder) else { return }
        tasks.start(priority: .utility) { [self] in
            try? await Task.sleep(nanoseconds: 300_000_000)
            if Task.isCancelled { return }
            if let inFlight = lock.withLock({ s in s.refreshes[folder] }) { _ = await inFlight.result }
            workingSet.watchedListingStarts(folder)
            let shown = lock.withLock { s in s.namespace[folder] != nil }
            guard shown else { return }
            _ = await lock.withLock { s in s.refreshes[folder] ?? startRefresh(&s, folder) }.result
        }
    }

    /// A folder is gone at the remote: its placeholders are forgotten, and the kernel is told
    /// if this mount showed it. Unless a file below it changed here and is not uploaded yet:
    /// then the folder stays as it is here (the file where the user put it), and the file's
    /// upload puts the folders back at the remote (`recreateMissingFolders`).
    func folderGone(_ folder: ItemIdentifier) {
        if lock.withLock({ s in s.dirty.hasAny(under: folder) }) {
            log.info("\(folder) is gone at \(provider.remoteDescription) but holds changes not uploaded yet: kept here; their upload makes it again")
            return
        }
        workingSet.forget(folder)
        let shown = lock.withLock { s in folder.parent.flatMap { s.namespace[$0]?[folder.name] } != nil }
        forgetSubtree(folder)
        dropPins(folder)
        if shown { remoteChanges.publish([.removed(folder, folder: true)]) }
    }
}
