import Foundation

/// Exact stats from earlier listings, reused while an entry's listing line (size and date text)
/// is unchanged — so only the first listing of a folder pays a stat per entry, and re-listings
/// cost one long listing plus a stat per new or changed entry.
///
/// Reuse is safe once the stat was taken well after the file's last change: any later write
/// gives an mtime in a later minute, which changes the line's date text. A stat taken within
/// `settle` seconds of the mtime (a file still being written, or clocks that disagree a little)
/// is not reused. Writes through this provider forget their paths; `item(for:)` never reuses.
final class SFTPStatCache: @unchecked Sendable {
    private struct Entry {
        var size: Int64
        var dateText: String
        var stat: SFTPVersion
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    /// Seconds between a file's mtime and the stat before the stat may be reused.
    let settle: Double
    /// Entries kept at most (a few hundred bytes each); beyond that the cache starts over.
    let capacity: Int

    init(settle: Double = 300, capacity: Int = 200_000) {
        self.settle = settle
        self.capacity = capacity
    }

    /// The stat for `path` if its line still shows `size` and `dateText`.
    func reusable(_ path: String, size: Int64, dateText: String) -> SFTPVersion? {
        lock.withLock {
            guard let e = entries[path], e.size == size, e.dateText == dateText else { return nil }
            return e.stat
        }
    }

    /// Keeps a stat taken by a request that started at `startedAt` (seconds since 1970).
    func store(_ path: String, size: Int64, dateText: String, stat: SFTPVersion, startedAt: Double) {
        lock.withLock {
            guard startedAt - Double(stat.mtime) > settle else { entries[path] = nil; return }
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[path] = Entry(size: size, dateText: dateText, stat: stat)
        }
    }

    /// Forgets `path` and everything below it (after a write, a move, a delete).
    func forget(_ path: String) {
        lock.withLock {
            entries[path] = nil
            let prefix = path.hasSuffix("/") ? path : path + "/"
            if entries.keys.contains(where: { $0.hasPrefix(prefix) }) {
                entries = entries.filter { !$0.key.hasPrefix(prefix) }
            }
        }
    }
}
