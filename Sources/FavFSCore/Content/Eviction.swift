import Foundation
import Logging

/// stopProviding by policy: least recently used clean content goes when the cache is past its
/// limit (`schedule`, `evictIfNeeded`) or the cache disk is full (`evictForSpace`), and all of
/// it at unmount (`evictAll`); never open, pinned, dirty or downloading content. Which content
/// may go, item by item, the cache decides under its own lock (`ContentCache.evictUnlessDirty`).
final class Eviction: Sendable {
    let cache: ContentCache
    /// What the user pinned (a folder's pin covers what is below it): never evicted.
    let pins: PinSet
    private let log = Logger(label: "favfs.content")
    /// Whether a pass is waiting to run, and when the last one began.
    private let passState = Guarded("Eviction.passState", (pending: false, lastPass: 0.0))
    /// The passes `schedule()` started: `stop` ends them before the store closes.
    private let passes = OwnedTasks()
    /// At most one pass this often: a pass sums the whole content table, and `cp -r` of
    /// thousands of files closes one every few hundred microseconds.
    static let interval: Double = 0.5

    init(cache: ContentCache, pins: PinSet) {
        self.cache = cache
        self.pins = pins
    }

    /// Runs `evictIfNeeded` in the background, off the reader's path. Calls while a run is
    /// pending fold into it, so a burst of downloads or closes costs one pass.
    func schedule() {
        let start = passState.withLock { s -> Bool in
            if s.pending { return false }
            s.pending = true
            return true
        }
        guard start else { return }
        passes.start(priority: .utility) { [self] in
            let wait = passState.withLock { s in s.lastPass + Self.interval - Date().timeIntervalSince1970 }
            if wait > 0 { try? await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
            if Task.isCancelled { return }
            // Cleared first: a change made while this pass runs schedules the next one.
            passState.withLock { s in
                s.pending = false
                s.lastPass = Date().timeIntervalSince1970
            }
            evictIfNeeded()
        }
    }

    /// Cancels the pass waiting to run and waits for one running; none starts after. Before
    /// `evictAll` and the store's close at unmount. Returns how many were still running.
    func stop(within seconds: Double) async -> Int {
        await passes.shutdown(within: seconds)
    }

    /// Pinned content: never evicted, and not counted against the cache's limit.
    func isPinned(_ r: ContentRecord) -> Bool { r.pinned || pins.covers(r.id) }

    /// Evicts least recently used content until the cache is within its limit (pinned content
    /// does not count).
    func evictIfNeeded() {
        guard let total = try? cache.store.contentBytes(), total > cache.limit else { return }
        let records = (try? cache.store.contentByLastUse()) ?? []
        let pinned = records.filter(isPinned)
        var excess = total - pinned.reduce(0) { $0 + $1.ranges.count } - cache.limit
        guard let dirty = cache.dirtyItems() else { return }
        for r in records where excess > 0 {
            if isPinned(r) || r.ranges.isEmpty || dirty.contains(r.id) { continue }
            if evict(r) { excess -= r.ranges.count }
        }
    }

    /// The cache disk is full: evicts least recently used clean content (not pinned, not
    /// dirty, not in use, not `except`) until about twice `needed` bytes are freed, and says so
    /// in the log (`purpose`: what the space is for). Returns the bytes freed.
    func evictForSpace(needed: Int64, except: ItemIdentifier, for purpose: String) -> Int64 {
        var freed: Int64 = 0
        guard let dirty = cache.dirtyItems() else { return 0 }
        for r in (try? cache.store.contentByLastUse()) ?? [] where freed < 2 * max(needed, cache.chunkSize) {
            if isPinned(r) || r.ranges.isEmpty || dirty.contains(r.id) || r.id == except { continue }
            if evict(r) { freed += r.ranges.count }
        }
        if freed > 0 { log.warning("the cache disk is full: evicted \(freed) bytes of least recently used content \(purpose)") }
        return freed
    }

    /// stopProviding: drops the cached content of one item (not if open, pinned or downloading,
    /// nor dirty). `r` may be older than the item's state now (a pass's list, read once): a file
    /// written and closed since is dirty, and its cache file the only copy of what was written.
    @discardableResult
    func evict(_ r: ContentRecord) -> Bool {
        cache.evictUnlessDirty(r) == .evicted
    }

    /// Evicts everything that is not pinned, dirty or in use (unmount). Returns files and bytes freed.
    func evictAll() -> (files: Int, bytes: Int64) {
        var files = 0, bytes: Int64 = 0
        guard let dirty = cache.dirtyItems() else { return (0, 0) }
        for r in (try? cache.store.contentByLastUse()) ?? [] where !isPinned(r) && !dirty.contains(r.id) {
            if evict(r) { files += 1; bytes += r.ranges.count }
        }
        files += cache.rescueUnknownFiles()
        return (files, bytes)
    }
}
