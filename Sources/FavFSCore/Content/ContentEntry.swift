import Foundation

/// One item's cached content while it is in use: an open sparse cache file of the item's size,
/// the ranges present, and the downloads in flight (by chunk, so two readers of one range share
/// one download). Guarded by `lock`; the cache file's bytes are written by transfers directly.
final class ContentEntry: @unchecked Sendable {
    /// Changes when the item is renamed (guarded by the cache's lock and this lock).
    var id: ItemIdentifier
    let file: String
    let fd: Int32
    let lock = NSLock()
    /// Serialises writing this entry's record to the store: each write snapshots the ranges
    /// while holding it, so a slower save of an older snapshot never overwrites a newer one.
    let saveLock = NSLock()
    // Guarded by lock:
    var version: String
    var size: Int64
    var ranges: ByteRangeSet
    var inflight: [Int64: Task<Void, Error>] = [:]
    /// Readers waiting for a range; resumed as soon as its bytes are present (not when the whole
    /// request that brings them ends).
    var waiters: [RangeWaiter] = []
    /// Open handles plus running downloads; the fd closes when it reaches zero.
    var users = 0
    var openHandles = 0
    var lastUsed: Double
    var pinned: Bool
    /// Set when the remote changed under a read: no more bytes are served from this entry.
    var stale = false
    /// Set when the item was deleted or replaced here while open: its open handles keep reading
    /// and writing the cache file (POSIX), nothing is downloaded or uploaded for it any more.
    var deleted = false
    /// Whether the store has a record of this entry (a new one gets it with its first bytes).
    var recorded = true
    /// Replies being sent from the cache file right now (`beginServing`): their bytes must not
    /// be dropped under them.
    var serving = 0
    /// The end of the last range served: where a sequential reader is.
    var servedUpTo: Int64 = 0
    /// The present byte count the store last recorded (nil: unknown); checked when the entry
    /// closes, so a save that failed or was overtaken is made good then.
    var savedBytes: Int64?

    init(id: ItemIdentifier, file: String, fd: Int32, version: String, size: Int64, ranges: ByteRangeSet,
         lastUsed: Double, pinned: Bool) {
        self.id = id; self.file = file; self.fd = fd; self.version = version; self.size = size
        self.ranges = ranges; self.lastUsed = lastUsed; self.pinned = pinned
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock(); defer { lock.unlock() }
        return try body()
    }

    /// Recorded, and the store has fewer present bytes than the file (call with the lock held).
    var recordBehind: Bool { recorded && !stale && !deleted && savedBytes != ranges.count }

    /// The persisted form (call with the lock held).
    var record: ContentRecord {
        .init(id: id, file: file, version: version, size: size, ranges: ranges, lastUsed: lastUsed, pinned: pinned)
    }

    /// Resumes the waiters whose range is present (call with the lock held).
    func resumeSatisfied() {
        guard !waiters.isEmpty else { return }
        waiters.removeAll { w in
            guard ranges.contains(w.range) else { return false }
            w.continuation.resume()
            return true
        }
    }

    /// Fails the waiters `matching` with `error` (call with the lock held).
    func fail(_ error: Error, where matching: (RangeWaiter) -> Bool) {
        waiters.removeAll { w in
            guard matching(w) else { return false }
            w.continuation.resume(throwing: error)
            return true
        }
    }

    /// True when every byte of `r` is on disk and may be served.
    func isPresent(_ r: Range<Int64>) -> Bool { withLock { !stale && ranges.contains(r) } }

    /// Starts serving `r` from the cache file when every byte of it is present: until
    /// `endServing`, no byte of this entry is dropped (`Downloads.dropOwnBytes`).
    func beginServing(_ r: Range<Int64>) -> Bool {
        withLock {
            guard !stale && ranges.contains(r) else { return false }
            serving += 1
            servedUpTo = r.upperBound
            return true
        }
    }

    func endServing() { withLock { serving -= 1 } }
}

/// A reader waiting for `range` of an entry.
struct RangeWaiter {
    let range: Range<Int64>
    let continuation: CheckedContinuation<Void, Error>
}
