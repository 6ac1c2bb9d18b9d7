import Foundation

/// What background work goes by: the folders in recent use (the poller's working set), the
/// stamps last seen of polled folders, the watched folders with a listing scheduled, and when a
/// program last opened or read a file (background fetching waits for a quiet moment).
///
/// Its own lock, a leaf: nothing here calls out while holding it, so it may be asked from
/// anywhere, also with `Domain.lock` held.
final class WorkingSet: Sendable {
    private struct State {
        var folderUse: [ItemIdentifier: Double] = [:]
        var stamps: [ItemIdentifier: String] = [:]
        var watchPending: Set<ItemIdentifier> = []
        var lastForegroundRead: Double = 0
    }

    private let state = Guarded("WorkingSet", State())

    /// `folder` was listed or looked into at `now`.
    func used(_ folder: ItemIdentifier, at now: Double) {
        state.withLock { $0.folderUse[folder] = now }
    }

    /// The folders used within `window` seconds before `now`, most recent first, at most
    /// `limit` of them; older ones are forgotten.
    func recentFolders(now: Double, window: Double, limit: Int) -> [ItemIdentifier] {
        state.withLock { s in
            s.folderUse = s.folderUse.filter { now - $0.value < window }
            return s.folderUse.sorted { $0.value > $1.value }.prefix(limit).map(\.key)
        }
    }

    /// Records `stamp` as `folder`'s latest; true when it is the one seen before.
    func stampUnchanged(_ folder: ItemIdentifier, _ stamp: String) -> Bool {
        state.withLock { s in
            defer { s.stamps[folder] = stamp }
            return s.stamps[folder] == stamp
        }
    }

    /// `folder` is gone: neither in use nor stamped.
    func forget(_ folder: ItemIdentifier) {
        state.withLock { s in
            s.folderUse[folder] = nil
            s.stamps[folder] = nil
        }
    }

    /// Schedules a listing of a watched folder that changed; false when one is scheduled already.
    func scheduleWatchedListing(_ folder: ItemIdentifier) -> Bool {
        state.withLock { $0.watchPending.insert(folder).inserted }
    }

    /// The scheduled listing of `folder` starts: later changes schedule another.
    func watchedListingStarts(_ folder: ItemIdentifier) {
        _ = state.withLock { $0.watchPending.remove(folder) }
    }

    /// A program opened or read a file at `now`.
    func foregroundRead(at now: Double) {
        state.withLock { $0.lastForegroundRead = now }
    }

    /// When a program last opened or read a file.
    var lastForegroundRead: Double { state.withLock { $0.lastForegroundRead } }
}
