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
        let answer = lock.withLock { s -> ImmediateLookup? in
            guard let listed = s.namespace[parent], listed.listedAt != nil, listed.verified else { return nil }
            enumerations.noteUse(&s, parent, listed, now: now, host: self)
            if let item = listed[name] { return .found(item) }
            // A listing that may leave out dot names cannot say such a name is absent.
            if enumerations.mayBeLeftOut(name) { return nil }
            return .absent
        }
        if answer != nil { workingSet.used(parent, at: now) }
        return answer
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

extension Domain {
    /// `setModified` of a dirty item (or one deleted while open): the time waits for the upload
    /// (or dies with the item), so nothing goes to the remote now. Nil for any other item
    /// (`setModified` then sets it at the remote).
    /// `tar x` sets the time of every file it has just written.
    public func setModifiedImmediately(_ id: ItemIdentifier, _ time: Timestamp) throws -> Item? {
        _ = try writer(id)
        if let orphan = setOrphanModified(id, time) { return orphan }
        guard var item = cachedItem(id) else { return nil }
        item.modifiedTime = time
        let deferred = lock.withLock { s in s.dirty.setPendingModified(id, time) }
        guard deferred else { return nil }
        placeholders.setPlaceholder(item, persist: false)
        return item
    }
}
