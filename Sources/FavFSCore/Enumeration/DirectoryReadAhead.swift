import Foundation

/// Where the directory read-ahead of one folder's subfolders stands.
struct SiblingReadAhead: Sendable {
    /// The index (in the folder's items) of the subfolder read last.
    var userAt = 0
    /// A subfolder after the one read before it was read: a walk, not a single visit.
    var walking = false
    /// Items before this index were already considered (listed, started or not folders).
    var scanned = 0
    /// Listings started by the read-ahead and not finished.
    var inFlight = 0
}

/// Directory read-ahead: a program that walks a tree (`find`, `du`, `cp -r`, a file manager
/// opening folder after folder) reads subfolders one after another, each waiting for its own
/// listing. As a file read in order gets read-ahead, reading a subfolder lists the next
/// `prefetchSubfolders` of its siblings in the background, `prefetchConcurrency` at a time, so
/// their listings overlap the walk instead of following each other. It starts with the second
/// subfolder read in order (as file read-ahead waits for a second sequential read): opening
/// one folder does not list its neighbours, which may be large.
///
/// Unlike `prefetchSubfolders(of:)` (a folder just listed, whose subfolders may never be
/// visited), this follows a walk that is under way: it starts at once, without waiting for
/// file reading to pause. Both are this part's: background work with no state but the
/// read-ahead's own (`siblingReadAhead` in `DomainState`), passed the host to give listings.
final class DirectoryReadAhead: Sendable {
    let options: DomainOptions
    let placeholders: Placeholders
    let enumerations: Enumerations
    let tasks: OwnedTasks
    /// When a program last read: the read-ahead of a folder just listed waits for a pause.
    let workingSet: WorkingSet

    init(options: DomainOptions, placeholders: Placeholders, enumerations: Enumerations, tasks: OwnedTasks,
         workingSet: WorkingSet) {
        self.options = options
        self.placeholders = placeholders
        self.enumerations = enumerations
        self.tasks = tasks
        self.workingSet = workingSet
    }

    /// `Domain.lock`: the read-ahead's state (`siblingReadAhead`) beside the listings in flight
    /// it starts (`startRefresh` runs with the lock held).
    var lock: Guarded<DomainState> { placeholders.lock }

    /// Lists never-listed subfolders of `state` in the background, a few at a time. Each
    /// listing is shared with an opendir that comes meanwhile.
    func prefetchSubfolders(of state: FolderState, host: any EnumerationsHost) {
        guard options.prefetchSubfolders > 0 else { return }
        // Each subfolder is read from the store (`preload`) before the lock asks whether it
        // was ever listed.
        var found: [ItemIdentifier] = []
        for sub in state.items where sub.kind == .folder && found.count < options.prefetchSubfolders {
            let known = placeholders.preload(sub.identifier)
            if lock.withLock({ s in s.refreshes[sub.identifier] == nil && placeholders.loadedState(&s, sub.identifier, load: known)?.listedAt == nil }) {
                found.append(sub.identifier)
            }
        }
        let candidates = found
        guard !candidates.isEmpty else { return }
        let limit = options.prefetchConcurrency
        tasks.start(priority: .utility) { [self] in
            // Foreground first: a listing of a big subfolder costs seconds of CPU, and a file
            // opened right after browsing must not wait behind it.
            try? await Task.sleep(nanoseconds: UInt64(options.prefetchDelay * 1e9))
            await withTaskGroup(of: Void.self) { group in
                var running = 0
                for child in candidates where !Task.isCancelled {
                    if running >= limit { await group.next(); running -= 1 }
                    await waitForQuiet()
                    let known = placeholders.preload(child)
                    let task: Task<FolderState, Error>? = lock.withLock { s in
                        if let t = s.refreshes[child] { return t }
                        if placeholders.loadedState(&s, child, load: known)?.listedAt != nil { return nil }
                        return enumerations.startRefresh(&s, child, host: host)
                    }
                    guard let task else { continue }
                    group.addTask { _ = try? await task.value }
                    running += 1
                }
            }
        }
    }

    /// Returns once no file was opened or read for `prefetchQuietTime`.
    func waitForQuiet() async {
        let quiet = options.prefetchQuietTime
        guard quiet > 0 else { return }
        while true {
            let since = Domain.now - workingSet.lastForegroundRead
            if since >= quiet { return }
            try? await Task.sleep(nanoseconds: UInt64((quiet - since) * 1e9) + 1_000_000)
        }
    }

    // MARK: walks

    /// `folder` was read (a readdir): list the subfolders after it in its parent ahead.
    func readAheadSiblings(of folder: ItemIdentifier, host: any EnumerationsHost) {
        guard options.prefetchSubfolders > 0, options.prefetchConcurrency > 0, let parent = folder.parent else { return }
        let unknown = preloadSiblings(in: parent, after: folder.name)
        lock.withLock { s in
            guard let siblings = s.namespace[parent], let at = siblings.index(of: folder.name) else { return }
            guard var r = s.siblingReadAhead[parent] else {
                s.siblingReadAhead[parent] = SiblingReadAhead(userAt: at)
                return
            }
            if at > r.userAt { r.walking = true }
            r.userAt = at
            s.siblingReadAhead[parent] = r
            if r.walking { fillSiblingReadAhead(&s, in: parent, unknownToStore: unknown, host: host) }
        }
    }

    /// Starts listings (lock held) of the never-listed subfolders in `parent`'s window until
    /// `prefetchConcurrency` run; each one finished starts the next. A subfolder neither in
    /// memory nor among those `preloadSiblings` just found the store knows nothing of ends the
    /// scan for now (asking the store here would hold the lock over SQLite): the next fill,
    /// after its own preload, goes on from there.
    private func fillSiblingReadAhead(_ s: inout DomainState, in parent: ItemIdentifier, unknownToStore: Set<ItemIdentifier>,
                                      host: any EnumerationsHost) {
        guard var r = s.siblingReadAhead[parent], let siblings = s.namespace[parent] else { return }
        let end = min(siblings.items.count, r.userAt + 1 + options.prefetchSubfolders)
        r.scanned = max(r.scanned, r.userAt + 1)
        while r.inFlight < options.prefetchConcurrency, r.scanned < end {
            let item = siblings.items[r.scanned]
            let id = item.identifier
            if item.kind == .folder, s.refreshes[id] == nil, s.namespace[id] == nil, !unknownToStore.contains(id) { break }
            r.scanned += 1
            guard item.kind == .folder, s.refreshes[id] == nil, s.namespace[id]?.listedAt == nil else { continue }
            let listing = enumerations.startRefresh(&s, id, host: host)
            r.inFlight += 1
            tasks.start(priority: .utility) { [self] in
                _ = try? await listing.value
                let unknown = preloadSiblings(in: parent, after: nil)
                lock.withLock { s in
                    s.siblingReadAhead[parent]?.inFlight -= 1
                    fillSiblingReadAhead(&s, in: parent, unknownToStore: unknown, host: host)
                }
            }
        }
        s.siblingReadAhead[parent] = r
    }

    /// Brings the subfolders the read-ahead of `parent` looks at next into memory from the
    /// store, without the lock (`fillSiblingReadAhead` asks whether each was ever listed):
    /// those after `name`, or after the last one considered. Returns those the store knows
    /// nothing of (still not in memory after it: never listed).
    private func preloadSiblings(in parent: ItemIdentifier, after name: String?) -> Set<ItemIdentifier> {
        let window: [ItemIdentifier] = lock.withLock { s in
            guard let siblings = s.namespace[parent] else { return [] }
            let start: Int
            if let name {
                guard let at = siblings.index(of: name) else { return [] }
                start = max(at + 1, s.siblingReadAhead[parent]?.scanned ?? 0)
            } else {
                guard let r = s.siblingReadAhead[parent] else { return [] }
                start = max(r.scanned, r.userAt + 1)
            }
            let end = min(siblings.items.count, start + options.prefetchSubfolders)
            guard start < end else { return [] }
            return siblings.items[start..<end].filter { $0.kind == .folder && s.namespace[$0.identifier] == nil }.map(\.identifier)
        }
        return Set(window.filter { !placeholders.preload($0) })
    }
}
