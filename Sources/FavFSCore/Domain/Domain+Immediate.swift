import Foundation

/// Answers that need neither the network nor a database read, for the bridge to give on the
/// FUSE thread: no task to start, no thread to wake and switch to (a lookup or a create was
/// two context switches more than its work, and `cp -r` of many small files waits for both).
/// Nil means "ask the async path", which knows everything these do.
extension Domain {
    /// What a lookup finds in a folder whose verified listing is in memory.
    public enum ImmediateLookup: Sendable {
        case found(Item)
        case absent
    }

    /// `lookup`, when the folder's verified listing is in memory (an absence is then known);
    /// starts the revalidation a stale listing gets, as `folderState` does.
    public func lookupImmediately(_ parent: ItemIdentifier, _ name: String) -> ImmediateLookup? {
        let now = Self.now
        return lock.withLock {
            guard let s = folders[parent], let listedAt = s.listedAt, s.verified else { return nil }
            folderUse[parent] = now
            if now - listedAt > options.dirCacheTime, refreshes[parent] == nil,
               now - (s.lastFailure ?? 0) > options.retryAfterFailure {
                _ = startRefresh(parent)
            }
            if let item = s[name] { return .found(item) }
            return .absent
        }
    }

    /// `create` of a name known to be absent (see `lookupImmediately`): the journal row, the
    /// placeholder and the cache file, all local. Nil when the name exists or is not known.
    public func createImmediately(_ parent: ItemIdentifier, _ name: String) throws -> (item: Item, handle: UInt64)? {
        let id = parent.child(name)
        if let problem = try writer(id).storageProblem(id, kind: .file) { throw problem }
        if ItemIdentifier.validate(name: name) != nil { throw error(.invalidName, id, "not a valid file name") }
        guard case .absent? = lookupImmediately(parent, name) else { return nil }
        return try createNew(id)
    }
}
