import Foundation

/// One item's cached content while it is in use: an open sparse cache file of the item's size,
/// the ranges present, and the downloads in flight (by chunk, so two readers of one range share
/// one download). Its state (`ContentEntryState`) is reachable only under its lock
/// (`withLock`); the cache file's bytes are written by transfers directly.
final class ContentEntry: Sendable {
    let file: String
    /// The cache file's path, for errors that name it.
    let path: String
    let fd: Int32
    /// Serialises writing this entry's record to the store: each write snapshots the ranges
    /// while holding it, so a slower save of an older snapshot never overwrites a newer one.
    /// Taken after SQLite's writer (`holdingWriter`), never waiting for it: witnessed.
    let saveLock = WitnessedLock("ContentEntry.saveLock", readsAllowed: true)
    private let state: Guarded<ContentEntryState>

    init(id: ItemIdentifier, file: String, path: String, fd: Int32, version: String, size: Int64, ranges: ByteRangeSet,
         lastUsed: Double, pinned: Bool) {
        self.file = file
        self.path = path
        self.fd = fd
        state = Guarded("ContentEntry.lock", ContentEntryState(id: id, version: version, size: size, ranges: ranges,
                                                               lastUsed: lastUsed, pinned: pinned))
    }

    /// Runs `body` with the entry's state, under its lock (a leaf: take no other lock inside).
    func withLock<T>(_ body: (inout ContentEntryState) throws -> T) rethrows -> T {
        try state.withLock(body)
    }

    /// The item this content is of now (it changes when the item is renamed).
    var id: ItemIdentifier { withLock { $0.id } }

    /// True when every byte of `r` is on disk and may be served.
    func isPresent(_ r: Range<Int64>) -> Bool { withLock { !$0.stale && $0.ranges.contains(r) } }

    /// Starts serving `r` from the cache file when every byte of it is present: until
    /// `endServing`, no byte of this entry is dropped (`Downloads.dropOwnBytes`).
    func beginServing(_ r: Range<Int64>) -> Bool {
        withLock { s in
            guard !s.stale && s.ranges.contains(r) else { return false }
            s.serving += 1
            s.servedUpTo = r.upperBound
            return true
        }
    }

    func endServing() { withLock { $0.serving -= 1 } }

    // MARK: local changes

    /// Writes `buffer` at `offset` into the cache file (the item is dirty); the bytes are present.
    func write(at offset: Int64, _ buffer: UnsafeRawBufferPointer) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw fileError("cannot write")
            }
            done += n
        }
        withLock { es in
            // A write past the end leaves a hole of zeros: part of the (local) content too.
            es.ranges.insert(min(offset, es.size)..<offset + Int64(done))
            es.size = max(es.size, offset + Int64(done))
            es.lastUsed = Date().timeIntervalSince1970
        }
        return done
    }

    /// Truncates or extends the cache file; bytes past the old end are zeros, and present.
    func setSize(_ size: Int64) throws {
        guard ftruncate(fd, off_t(size)) == 0 else { throw fileError("cannot truncate") }
        withLock { es in
            if size > es.size { es.ranges.insert(es.size..<size) } else { es.ranges.clamp(to: size) }
            es.size = size
        }
    }

    /// A `recordLater` entry's record was written by the caller.
    func markRecorded() {
        withLock { es in es.recorded = true; es.savedBytes = es.ranges.count }
    }

    /// Writes the entry's current record to `store`. Concurrent downloads of one file each end
    /// with a save; the snapshot is taken under `saveLock` so the last write is always the
    /// newest state (an older snapshot saved last made a fully read file look partial after it
    /// closed). A stale entry is not saved: its record was deleted and must stay deleted.
    /// `item`, when given, is saved in the same transaction (its placeholder after a write).
    /// SQLite's writer is taken before `saveLock` (the lock order): a rename's
    /// `ContentCache.move` holds the writer while it takes the moved entries' `saveLock`s.
    ///
    /// The placeholder `item` is saved only while it is this entry's item (read under the writer,
    /// which a rename and a delete hold to record theirs): one read before a rename or a delete
    /// of it would bring the old name back in the store.
    func saveRecord(to store: PlaceholderStore, with item: Item? = nil) throws {
        // Nothing to write (and no writer to wait for): `stale` and `deleted` are never unset.
        if item == nil, withLock({ es in es.stale || es.deleted }) { return }
        try store.holdingWriter { _ in
            try saveLock.withLock {
                let (id, deleted) = withLock { es in (es.id, es.deleted) }
                let item = item.flatMap { $0.identifier == id && !deleted ? $0 : nil }
                // Deleted (or replaced by a rename) while open: its record is gone and the name may
                // be another item's now, whose record this must not overwrite.
                guard let r = withLock({ es in es.stale || es.deleted ? nil : es.record(file: file) }) else {
                    if let item { try store.upsert(item) }
                    return
                }
                try store.saveContent(r, with: item)
                withLock { es in es.savedBytes = r.ranges.count }
            }
        }
    }

    /// The error of a failed call on the cache file, named.
    private func fileError(_ what: String, _ err: Int32 = errno) -> ProviderError {
        ContentCache.localError(what, id, file: path, err)
    }
}

/// What a `ContentEntry`'s lock guards.
struct ContentEntryState: Sendable {
    /// Changes when the item is renamed (under the cache's lock too).
    var id: ItemIdentifier
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

    init(id: ItemIdentifier, version: String, size: Int64, ranges: ByteRangeSet, lastUsed: Double, pinned: Bool) {
        self.id = id; self.version = version; self.size = size; self.ranges = ranges
        self.lastUsed = lastUsed; self.pinned = pinned
    }

    /// Recorded, and the store has fewer present bytes than the file.
    var recordBehind: Bool { recorded && !stale && !deleted && savedBytes != ranges.count }

    /// The persisted form, for the cache file `file`.
    func record(file: String) -> ContentRecord {
        .init(id: id, file: file, version: version, size: size, ranges: ranges, lastUsed: lastUsed, pinned: pinned)
    }

    /// Resumes the waiters whose range is present.
    mutating func resumeSatisfied() {
        guard !waiters.isEmpty else { return }
        let ranges = ranges
        waiters.removeAll { w in
            guard ranges.contains(w.range) else { return false }
            w.continuation.resume()
            return true
        }
    }

    /// Fails the waiters `matching` with `error`.
    mutating func fail(_ error: Error, where matching: (RangeWaiter) -> Bool) {
        waiters.removeAll { w in
            guard matching(w) else { return false }
            w.continuation.resume(throwing: error)
            return true
        }
    }
}

/// A reader waiting for `range` of an entry.
struct RangeWaiter: Sendable {
    let range: Range<Int64>
    let continuation: CheckedContinuation<Void, Error>
}
