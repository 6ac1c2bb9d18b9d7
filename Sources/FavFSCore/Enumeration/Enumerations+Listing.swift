import Foundation

/// Enumerating a folder: the remote's listing, merged with what was changed here meanwhile,
/// answers from memory at once; its placeholders are saved to the store right after, off the
/// waiting `readdir`'s path (5,000 entries take 17-21 ms to save, 100,000 about a second).
extension Enumerations {
    func enumerate(_ folder: ItemIdentifier, host: any EnumerationsHost) async throws -> FolderState {
        // The previous listing of this folder finishes saving first: its change tracking
        // (`Namespace.listingStarts`) and its save must not interleave with this one's.
        if let saving = lock.withLock({ s in s.listingSaves[folder] }) { await saving.value }
        let started = Date()
        let since = lock.withLock { s in s.namespace.listingStarts(folder) }
        var items: [Item]
        do {
            items = try await provider.enumerateAll(in: folder)
        } catch {
            lock.withLock { s in s.namespace.listingEnds(folder) }
            throw error
        }
        items += await stillThere(leftOutOf: items, in: folder)
        let fetched = Date()
        let listedAt = Domain.now
        var folderItem = placeholders.cachedItem(folder) ?? Item(identifier: folder, kind: .folder)
        folderItem.kind = .folder
        // False: the store knows nothing of the folder, and memory alone answers below.
        let known = placeholders.preload(folder)
        // Local changes not yet uploaded, and names created, removed or renamed here while the
        // listing ran, win over what the remote lists (or does not list yet).
        let (state, mergedAt, previous): (FolderState, UInt64, FolderState?) = lock.withLock { s in
            func loadedState(_ s: inout DomainState, _ folder: ItemIdentifier) -> FolderState? {
                placeholders.loadedState(&s, folder, load: known)
            }
            let local = s.dirty.ids(in: folder).compactMap { loadedState(&s, folder)?[$0.name] }
            if !local.isEmpty {
                let names = Set(local.map(\.name))
                items = items.filter { !names.contains($0.name) } + local
            }
            // A folder gone at the remote that holds changes not uploaded yet stays (their
            // upload makes it again); a file another client put at its name wins.
            let holding = s.dirty.folderNames(holdingChangesIn: folder)
            if !holding.isEmpty {
                let listed = Set(items.map(\.name))
                for name in holding where !listed.contains(name) {
                    if let kept = loadedState(&s, folder)?[name], kept.kind == .folder { items.append(kept) }
                }
            }
            items = overlayChanges(&s, items, in: folder, since: since)
            if s.namespace.keepsTimes { items = items.map { s.namespace.withKeptTime($0) } }
            if items.contains(where: { $0.modifiedTime == nil }) {
                let before = loadedState(&s, folder), now = Domain.now
                items = items.map { Placeholders.withFirstSeenTime($0, before: before?[$0.name], now: now) }
            }
            // Handed over, not shared: sorted in place, one array in memory, which the save
            // below takes too (`state.items`).
            let merged = items
            items = []
            var state = FolderState(folder: folder, items: consume merged, listedAt: listedAt)
            state.verified = true
            state.listingSeconds = Date().timeIntervalSince(started)
            // Child folders that vanished or changed kind: forget their loaded listings.
            if let old = s.namespace[folder] {
                for item in old.items where item.kind == .folder && state[item.name]?.kind != .folder {
                    s.namespace.dropLoaded(below: item.identifier)
                }
            }
            // What this mount showed before, to tell the kernel what changed.
            let previous = s.namespace[folder]
            s.namespace[folder] = state
            return (state, s.namespace.changeSequence, previous)
        }
        saveListing(folder, folderItem, state.items, listedAt: listedAt, mergedAt: mergedAt, fetched: fetched.timeIntervalSince(started))
        (provider as? any FolderWatchingProvider)?.watch(folder)
        if let previous, previous.listedAt != nil {
            host.applyRemoteChanges(RemoteChange.diff(old: previous.items, new: state.items), in: state)
        }
        return state
    }

    /// The items of `folder` this mount knows that a listing which leaves out dot names did
    /// not show (nginx), each asked for by name: those still there stay.
    private func stillThere(leftOutOf listed: [Item], in folder: ItemIdentifier) async -> [Item] {
        guard provider.capabilities.contains(.listingsMayLeaveOutDotNames) else { return [] }
        let names = Set(listed.map(\.name))
        let known = lock.withLock { s in s.namespace[folder]?.items.filter { $0.name.hasPrefix(".") && !names.contains($0.name) } ?? [] }
        var kept: [Item] = []
        for item in known {
            do { kept.append(try await provider.item(for: item.identifier)) }
            catch let e as ProviderError where e.kind == .notFound { continue }
            catch { kept.append(item) }  // not known to be gone: it stays as it was
        }
        return kept
    }

    /// Saves a listing's placeholders in the background. The folder's changes stay tracked
    /// until then: whatever was created, removed or renamed here after the merge is written
    /// again from memory once the listing is in the store (files written here are kept by the
    /// store itself: `replaceChildren` leaves journaled children alone).
    private func saveListing(_ folder: ItemIdentifier, _ folderItem: Item, _ items: [Item], listedAt: Double,
                             mergedAt: UInt64, fetched: TimeInterval) {
        let store = self.store
        saveGroup.enter()
        lock.withLock { s in
            s.listingSaves[folder] = Task { [self] in
                let started = Date()
                do {
                    // Saving 100,000 placeholders takes a second: not on the cooperative pool.
                    try await BlockingWork.run { try store.replaceChildren(of: folderItem, with: items, listedAt: listedAt) }
                } catch {
                    // Memory has the listing; the store keeps the older placeholders, which the
                    // next mount revalidates before trusting them.
                    log.error("cannot save the placeholders of \(folder): \(error)")
                }
                let late: [(String, Item?)] = lock.withLock { s in
                    s.namespace.names(in: folder, changedAfter: mergedAt).map { ($0, placeholders.loadedState(&s, folder)?[$0]) }
                }
                for (name, item) in late {
                    if let item { try? store.upsert(item) } else { try? store.removeSubtree(folder.child(name)) }
                }
                lock.withLock { s in
                    s.namespace.listingEnds(folder)
                    s.listingSaves[folder] = nil
                }
                saveGroup.leave()
                log.debug("listed \(folder): \(items.count) items, fetched in \(Int(fetched * 1000)) ms, stored in \(Int(Date().timeIntervalSince(started) * 1000)) ms")
            }
        }
    }

    /// Waits until every listing answered so far is in the store.
    func waitForListingSaves() async {
        while let saving = lock.withLock({ s in s.listingSaves.values.first }) { await saving.value }
    }

    /// At unmount, before the store closes: waits for the listing saves, `seconds` at most.
    func waitForListingSaves(within seconds: Double) {
        if saveGroup.wait(timeout: .now() + seconds) == .timedOut { log.warning("unmounting with a listing still being saved") }
    }

    /// `items` with the names changed here since `since` taken from the current placeholders
    /// instead (present or gone). Lock held.
    private func overlayChanges(_ s: inout DomainState, _ items: [Item], in folder: ItemIdentifier, since: UInt64) -> [Item] {
        let changed = s.namespace.names(in: folder, changedAfter: since)
        guard !changed.isEmpty else { return items }
        var byName = Dictionary(items.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for name in changed { byName[name] = placeholders.loadedState(&s, folder)?[name] }
        return Array(byName.values)
    }
}
