/// The namespace in memory: the placeholders of the folders this mount has loaded (from the
/// store or a listing) and the root's item, with what a listing must not undo — the names
/// changed here while their folder's listing runs (`ListingChanges`) and the modification
/// times kept here for a remote that does not keep them (`KeptModifiedTimes`).
///
/// A value kept under `Domain.lock`, as `DirtySet` is: no I/O, no other part called. A change
/// made here goes through `put`, `replaceIfListed` or `removeName`, which note it for a listing
/// in flight; a listing's result replaces a whole folder through the subscript.
struct Namespace {
    /// The root folder's item (it has no parent listing to live in).
    var root: Item
    private var folders: [ItemIdentifier: FolderState] = [:]
    private var changes = ListingChanges()
    private var keptTimes: KeptModifiedTimes

    init(root: Item, keptTimes: KeptModifiedTimes) {
        self.root = root
        self.keptTimes = keptTimes
    }

    // MARK: folders

    /// The loaded state of `folder`; setting replaces it (a listing, a load from the store, a
    /// new folder), nil forgets it.
    subscript(folder: ItemIdentifier) -> FolderState? {
        get { folders[folder] }
        set { folders[folder] = newValue }
    }

    /// The folders loaded in memory.
    var loadedFolders: [ItemIdentifier] { Array(folders.keys) }

    /// The item at `id` where its folder is loaded (the root's item for the root).
    func item(_ id: ItemIdentifier) -> Item? {
        if id.isRoot { return root }
        guard let parent = id.parent else { return nil }
        return folders[parent]?[id.name]
    }

    /// Forgets the loaded listings at and below `id` (a folder gone, moved or become a file).
    mutating func dropLoaded(below id: ItemIdentifier) {
        for key in folders.keys where key.isAtOrBelow(id) { folders[key] = nil }
    }

    // MARK: changes made here

    /// `item` is what its name holds now, by a change made here: in its folder if that is
    /// loaded (the root's item for the root), noted for a listing in flight. False when its
    /// folder is not loaded (the store alone has it then).
    @discardableResult
    mutating func put(_ item: Item) -> Bool {
        guard let parent = item.parent else { root = item; return true }
        changes.note(item.identifier)
        guard folders[parent] != nil else { return false }
        folders[parent]![item.name] = item
        return true
    }

    /// `item` replaces what its name holds where its folder lists it already (an upload or a
    /// copy confirmed, an item re-read); `noting`: also for a listing in flight.
    mutating func replaceIfListed(_ item: Item, noting: Bool = false) {
        if noting { changes.note(item.identifier) }
        guard let parent = item.parent, folders[parent]?[item.name] != nil else { return }
        folders[parent]![item.name] = item
    }

    /// `id`'s name holds nothing now (deleted, renamed away, gone at the remote), and nothing
    /// of what was below it stays loaded.
    mutating func removeName(_ id: ItemIdentifier) {
        changes.note(id)
        dropLoaded(below: id)
        if let parent = id.parent { folders[parent]?[id.name] = nil }
    }

    /// Changes the placeholder at `id` in place, where its folder is loaded (a write's size and
    /// mtime, a folder's mtime), without noting it: the name stays as it was.
    mutating func update(_ id: ItemIdentifier, _ change: (inout Item) -> Void) {
        if id.isRoot { change(&root); return }
        guard let parent = id.parent, folders[parent]?[id.name] != nil else { return }
        change(&folders[parent]![id.name]!)
    }

    // MARK: listings in flight

    /// A listing of `folder` starts: changes from now on are noted. Its sequence number.
    mutating func listingStarts(_ folder: ItemIdentifier) -> UInt64 { changes.listingStarts(folder) }

    /// The listing of `folder` failed, or is merged and saved.
    mutating func listingEnds(_ folder: ItemIdentifier) { changes.listingEnds(folder) }

    /// The names in `folder` changed here after sequence number `after`.
    func names(in folder: ItemIdentifier, changedAfter after: UInt64) -> [String] {
        changes.names(in: folder, changedAfter: after)
    }

    /// The sequence number of the last change noted.
    var changeSequence: UInt64 { changes.sequence }

    // MARK: times kept here

    /// Whether any time is kept here (a listing then checks its items against them).
    var keepsTimes: Bool { !keptTimes.isEmpty }

    /// Keeps `time` for `id` while the remote has `version`. True the first time in this mount.
    mutating func keepTime(_ id: ItemIdentifier, version: String, time: Timestamp) -> Bool {
        keptTimes.keep(id, version: version, time: time)
    }

    /// `item` with the time kept for it, if the remote's version is still the one it was set on.
    mutating func withKeptTime(_ item: Item) -> Item { keptTimes.apply(item) }

    /// `source` and what was below it are at `destination` now: the name at `source` holds
    /// nothing, nothing of either stays loaded, and the kept times go with them.
    mutating func moved(_ source: ItemIdentifier, to destination: ItemIdentifier) {
        removeName(source)
        dropLoaded(below: destination)
        keptTimes.renamed(source, to: destination)
    }
}
