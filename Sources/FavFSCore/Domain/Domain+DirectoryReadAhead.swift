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
/// file reading to pause.
extension Domain {
    /// `folder` was read (a readdir): list the subfolders after it in its parent ahead.
    func readAheadSiblings(of folder: ItemIdentifier) {
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
            if r.walking { fillSiblingReadAhead(&s, in: parent, unknownToStore: unknown) }
        }
    }

    /// Starts listings (lock held) of the never-listed subfolders in `parent`'s window until
    /// `prefetchConcurrency` run; each one finished starts the next. A subfolder neither in
    /// memory nor among those `preloadSiblings` just found the store knows nothing of ends the
    /// scan for now (asking the store here would hold the lock over SQLite): the next fill,
    /// after its own preload, goes on from there.
    private func fillSiblingReadAhead(_ s: inout DomainState, in parent: ItemIdentifier, unknownToStore: Set<ItemIdentifier>) {
        guard var r = s.siblingReadAhead[parent], let siblings = s.namespace[parent] else { return }
        let end = min(siblings.items.count, r.userAt + 1 + options.prefetchSubfolders)
        r.scanned = max(r.scanned, r.userAt + 1)
        while r.inFlight < options.prefetchConcurrency, r.scanned < end {
            let item = siblings.items[r.scanned]
            let id = item.identifier
            if item.kind == .folder, s.refreshes[id] == nil, s.namespace[id] == nil, !unknownToStore.contains(id) { break }
            r.scanned += 1
            guard item.kind == .folder, s.refreshes[id] == nil, s.namespace[id]?.listedAt == nil else { continue }
            let listing = startRefresh(&s, id)
            r.inFlight += 1
            tasks.start(priority: .utility) { [self] in
                _ = try? await listing.value
                let unknown = preloadSiblings(in: parent, after: nil)
                lock.withLock { s in
                    s.siblingReadAhead[parent]?.inFlight -= 1
                    fillSiblingReadAhead(&s, in: parent, unknownToStore: unknown)
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
        return Set(window.filter { !preload($0) })
    }
}
