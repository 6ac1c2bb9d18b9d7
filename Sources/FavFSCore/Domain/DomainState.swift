/// What `Domain.lock` guards, reachable only inside it (`Guarded`): the namespace in memory and
/// write-back's dirty set share the lock because an upload's commit changes both in one step
/// and `openFile` and `markDirty` read both in one step; with them, the listings in flight.
struct DomainState {
    /// The placeholders loaded in memory, with what a listing must not undo (see `Namespace`).
    var namespace: Namespace
    /// Items changed here and not yet confirmed by the remote (write-back's decisions).
    var dirty = DirtySet()
    /// Enumerations in flight, shared by everyone waiting for that folder.
    var refreshes: [ItemIdentifier: Task<FolderState, Error>] = [:]
    /// Listings answered from memory whose placeholders are still being saved (`saveListing`).
    var listingSaves: [ItemIdentifier: Task<Void, Never>] = [:]
    /// Per parent folder, the directory read-ahead of its subfolders (`readAheadSiblings`).
    var siblingReadAhead: [ItemIdentifier: SiblingReadAhead] = [:]
}
