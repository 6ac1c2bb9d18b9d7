/// The names created, removed or renamed here in folders whose listing is in flight or being
/// saved: a listing that started before such a change must not undo it (a `cp -r` creates files
/// while their folder is being listed), nor may its save write the older state over it.
///
/// A value, kept under `Domain.lock` with the folders it describes; no I/O.
struct ListingChanges: Sendable {
    /// Per folder with a listing under way, the sequence number when it started.
    private var listingSince: [ItemIdentifier: UInt64] = [:]
    /// Per such folder, each name changed here and the sequence number of its last change.
    private var changed: [ItemIdentifier: [String: UInt64]] = [:]
    /// Increases with every change noted.
    private(set) var sequence: UInt64 = 0

    /// A listing of `folder` starts: changes from now on are noted. Returns the sequence number
    /// it started at.
    mutating func listingStarts(_ folder: ItemIdentifier) -> UInt64 {
        listingSince[folder] = sequence
        return sequence
    }

    /// The listing of `folder` failed, or is merged and saved: nothing more to note for it.
    mutating func listingEnds(_ folder: ItemIdentifier) {
        listingSince[folder] = nil
        changed[folder] = nil
    }

    /// `id` was created, removed or renamed here: noted if its folder's listing is under way.
    mutating func note(_ id: ItemIdentifier) {
        guard let parent = id.parent, listingSince[parent] != nil else { return }
        sequence += 1
        changed[parent, default: [:]][id.name] = sequence
    }

    /// The names in `folder` changed here after sequence number `after`.
    func names(in folder: ItemIdentifier, changedAfter after: UInt64) -> [String] {
        changed[folder]?.filter { $0.value > after }.map(\.key) ?? []
    }
}
