import Foundation

/// Uploads and downloads running now, for `favfs status` (`--json`, `--watch`): per item and
/// direction, bytes done and total, a rate over the last few seconds and an ETA.
///
/// Bytes are counted where they move: the transport tells the counter of the task that started
/// the transfer (`TransferCounting.current`, a task-local), so providers need not pass progress
/// along. A download's bytes done are the item's bytes present in the cache (or, when more, those
/// present at its start plus the bytes received since), its total the item's size; an upload's
/// are the bytes of the cache file sent so far.
public final class TransferRegistry: @unchecked Sendable {
    public enum Direction: String, Sendable, Codable { case upload, download }

    /// One transfer as it is now.
    public struct Snapshot: Sendable, Equatable {
        public var id: ItemIdentifier
        public var direction: Direction
        public var bytesDone: Int64
        public var bytesTotal: Int64
        /// Seconds since the epoch.
        public var started: Double
        /// Bytes per second over the last `rateWindow` seconds.
        public var rateBytesPerSecond: Double
        /// Seconds left at that rate; nil while nothing moves.
        public var etaSeconds: Double?
    }

    /// The span the rate is measured over.
    static let rateWindow: Double = 5
    /// A transfer that ends and starts again within this time (a sequential reader's next
    /// request) continues the same entry: its rate and start time are kept.
    static let linger: Double = 2

    private struct Key: Hashable { let id: ItemIdentifier; let direction: Direction }
    private let lock = NSLock()
    private var transfers: [Key: TransferCounter] = [:]
    private var lastPrune: Double = 0

    public init() {}

    /// Starts counting a transfer of `id` (or joins the one running: parallel requests of one
    /// download share it). `done`, when given, reports bytes done (a download's present bytes)
    /// instead of the bytes counted. Balance with `end`.
    func begin(_ id: ItemIdentifier, _ direction: Direction, total: Int64, done: (@Sendable () -> Int64)? = nil) -> TransferCounter {
        let now = Date().timeIntervalSince1970
        return lock.withLock {
            let key = Key(id: id, direction: direction)
            if let t = transfers[key], t.users > 0 || now - t.endedAt < Self.linger {
                t.users += 1
                t.update(total: total, done: done)
                return t
            }
            let t = TransferCounter(id: id, direction: direction, total: total, started: now, done: done)
            t.users = 1
            transfers[key] = t
            return t
        }
    }

    /// Ends one user of a transfer; it leaves the list when the last one ends (after `linger`).
    func end(_ t: TransferCounter) {
        let now = Date().timeIntervalSince1970
        lock.withLock {
            t.users -= 1
            if t.users == 0 { t.endedAt = now }
            // Ended entries go at most every `linger`: pruning at every end walked the whole
            // table (a thousand entries while small files upload; 3% of favfs's CPU).
            guard now - lastPrune >= Self.linger else { return }
            lastPrune = now
            transfers = transfers.filter { $0.value.users > 0 || now - $0.value.endedAt < Self.linger }
        }
    }

    /// Runs `body` counting a transfer: bytes the transport moves in it go to this transfer.
    func track<T: Sendable>(_ id: ItemIdentifier, _ direction: Direction, total: Int64, done: (@Sendable () -> Int64)? = nil,
                            _ body: () async throws -> T) async rethrows -> T {
        let t = begin(id, direction, total: total, done: done)
        defer { end(t) }
        return try await TransferCounting.$current.withValue(t) { try await body() }
    }

    /// Raises the total of a running transfer (an upload streamed while its file grows).
    func grow(_ id: ItemIdentifier, _ direction: Direction, total: Int64) {
        lock.withLock { transfers[Key(id: id, direction: direction)] }?.grow(total: total)
    }

    /// The transfers running now, oldest first.
    public func snapshot() -> [Snapshot] {
        let now = Date().timeIntervalSince1970
        let running = lock.withLock { transfers.values.filter { $0.users > 0 } }
        return running.map { $0.snapshot(now: now) }.sorted { $0.started < $1.started }
    }

    /// Bytes done and total of the running transfer of `id` (an upload before a download).
    public func progress(of id: ItemIdentifier) -> (done: Int64, total: Int64)? {
        let now = Date().timeIntervalSince1970
        let t = lock.withLock { () -> TransferCounter? in
            for d in [Direction.upload, .download] {
                if let t = transfers[Key(id: id, direction: d)], t.users > 0 { return t }
            }
            return nil
        }
        return t.map { let s = $0.snapshot(now: now); return (s.bytesDone, s.bytesTotal) }
    }
}

/// The task-local through which the transport finds the transfer it counts for.
public enum TransferCounting {
    @TaskLocal public static var current: TransferCounter?
}

/// One running transfer's bytes. `add` is called by the transport's thread as bytes move.
public final class TransferCounter: @unchecked Sendable {
    let id: ItemIdentifier
    let direction: TransferRegistry.Direction
    let started: Double
    private let lock = NSLock()
    private var total: Int64
    private var done: (@Sendable () -> Int64)?
    private var moved: Int64 = 0
    /// `done` when the transfer began: a download's bytes done are at least this plus the
    /// bytes received since (present bytes lag behind what arrives where a provider reports
    /// them only at the end of a request).
    private var baseline: Int64 = 0
    /// (time, bytes moved) at most every 100 ms, the last `rateWindow` seconds of them.
    private var samples: [(t: Double, bytes: Int64)] = []
    // Guarded by the registry's lock:
    var users = 0
    var endedAt: Double = 0

    init(id: ItemIdentifier, direction: TransferRegistry.Direction, total: Int64, started: Double, done: (@Sendable () -> Int64)?) {
        self.id = id; self.direction = direction; self.total = total; self.started = started; self.done = done
        samples = [(started, 0)]
        baseline = done?() ?? 0
    }

    func update(total: Int64, done: (@Sendable () -> Int64)?) {
        lock.withLock {
            // A new upload of the item (the file changed meanwhile) starts from zero.
            if self.done == nil && done == nil && total != self.total { moved = 0 }
            self.total = total
            if let done { self.done = done }
        }
    }

    /// A streamed upload's total follows its file as it is written.
    func grow(total: Int64) { lock.withLock { self.total = max(self.total, total) } }

    /// `bytes` more moved (negative: the transport rewound to send again).
    public func add(_ bytes: Int64) {
        let now = Date().timeIntervalSince1970
        lock.withLock {
            moved = max(0, moved + bytes)
            if let last = samples.last, now - last.t < 0.1 { return }
            samples.append((now, moved))
            if let first = samples.first, now - first.t > TransferRegistry.rateWindow * 2 {
                samples.removeAll { now - $0.t > TransferRegistry.rateWindow }
            }
        }
    }

    func snapshot(now: Double) -> TransferRegistry.Snapshot {
        let (total, moved, samples, done, baseline) = lock.withLock { (self.total, self.moved, self.samples, self.done, self.baseline) }
        let bytesDone = min(total, max(0, done.map { max($0(), baseline + moved) } ?? moved))
        // The rate since the oldest sample inside the window (or since the start).
        let base = samples.first { now - $0.t <= TransferRegistry.rateWindow } ?? samples.last ?? (started, 0)
        let span = now - base.t
        let rate = span > 0.2 ? Double(max(0, moved - base.bytes)) / span : 0
        let left = total - bytesDone
        let eta: Double? = left <= 0 ? 0 : rate > 0 ? Double(left) / rate : nil
        return .init(id: id, direction: direction, bytesDone: bytesDone, bytesTotal: total, started: started,
                     rateBytesPerSecond: rate, etaSeconds: eta)
    }
}
