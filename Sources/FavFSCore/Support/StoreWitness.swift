import Foundation
import Synchronization

/// Checks the rule "no thread waits for SQLite's writer while it holds a lock a FUSE callback
/// takes" as the code runs: such a lock (`WitnessedLock`) counts, per thread, how often it is
/// held; every call into the store asks `StoreWitness.storeCalled` first. In debug builds (the
/// tests) a store call under such a lock is recorded, with where it came from, unless it is a
/// read under a lock made `readsAllowed` (a read of the WAL database never waits for the
/// writer), a call on the writer this thread took before its locks
/// (`PlaceholderStore.holdingWriter`), or inside `allowing(_:)`, which names why that one is
/// accepted. Taking the writer with such a lock held is recorded too. Release builds only take
/// and release the lock.
///
/// Why it matters: the store waits for SQLite's single writer (a listing of 100,000 entries
/// holds it for about a second), and every `lookup`, `getattr` and `open` takes `Domain.lock`.
public enum StoreWitness {
    /// A store call made under a witnessed lock, outside `allowing`.
    public struct Violation: Sendable, CustomStringConvertible {
        public let call: String
        public let lock: String
        public var description: String { "\(call) with \(lock) held" }
    }

    private static let recorded = Mutex<[Violation]>([])
    private static let allowedRecord = Mutex<[String: Int]>([:])

    /// The store calls made under a witnessed lock so far (debug builds; empty in release).
    public static var violations: [Violation] { recorded.withLock { $0 } }

    /// How often each `allowing(_:)` reason let a store call run under a witnessed lock.
    public static var allowed: [String: Int] { allowedRecord.withLock { $0 } }

    /// Forgets what was recorded (a test's start).
    public static func reset() {
        recorded.withLock { $0 = [] }
        allowedRecord.withLock { $0 = [:] }
    }

    /// Called by the store before each call into SQLite; `writes`: whether it may write.
    static func storeCalled(_ call: @autoclosure () -> String, writes: Bool) {
        #if DEBUG
        // A call on the writer this thread took before its locks (`holdingWriter`) waits for
        // no one: reads run on it too (`PlaceholderStore.read`).
        if ThreadLocks.current.writer > 0 { return }
        guard let held = ThreadLocks.current.held.last(where: { writes || !$0.readsAllowed })?.name else { return }
        if let reason = ThreadLocks.current.allowances.last {
            allowedRecord.withLock { $0[reason, default: 0] += 1 }
            return
        }
        let v = Violation(call: call(), lock: held)
        recorded.withLock { if $0.count < 100 { $0.append(v) } }
        #endif
    }

    /// Called by `PlaceholderStore.holdingWriter` before it takes SQLite's writer: taken under
    /// a witnessed lock, the wait for it would hold that lock (and the writer, held first,
    /// comes before every witnessed lock in the lock order).
    static func writerTaken(_ call: @autoclosure () -> String) {
        #if DEBUG
        guard let held = ThreadLocks.current.held.last?.name else { return }
        let v = Violation(call: "SQLite's writer taken by " + call(), lock: held)
        recorded.withLock { if $0.count < 100 { $0.append(v) } }
        #endif
    }

    /// Whether this thread holds SQLite's writer (`holdingWriter`), taken with no witnessed lock held.
    static func writerHeld(_ held: Bool) {
        #if DEBUG
        ThreadLocks.current.writer += held ? 1 : -1
        #endif
    }

    /// Runs `body`, whose store calls under a witnessed lock are accepted for `reason`
    /// (counted in `allowed`, not recorded as violations).
    static func allowing<T>(_ reason: String, _ body: () throws -> T) rethrows -> T {
        #if DEBUG
        ThreadLocks.current.allowances.append(reason)
        defer { ThreadLocks.current.allowances.removeLast() }
        #endif
        return try body()
    }
}

/// An `NSLock` that, in debug builds, tells `StoreWitness` while the current thread holds it.
final class WitnessedLock: NSLocking, @unchecked Sendable {
    private let inner = NSLock()
    private let name: String
    private let readsAllowed: Bool

    /// `readsAllowed`: store reads under this lock are accepted, writes are not.
    init(_ name: String, readsAllowed: Bool = false) { self.name = name; self.readsAllowed = readsAllowed }

    func lock() {
        inner.lock()
        #if DEBUG
        ThreadLocks.current.held.append((name, readsAllowed))
        #endif
    }

    func unlock() {
        #if DEBUG
        ThreadLocks.current.held.removeLast()
        #endif
        inner.unlock()
    }
}

#if DEBUG
/// The witnessed locks the current thread holds, and the allowances in force on it.
private final class ThreadLocks {
    var held: [(name: String, readsAllowed: Bool)] = []
    var allowances: [String] = []
    /// Held writers (`StoreWitness.writerHeld`).
    var writer = 0

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { p in if let p { Unmanaged<ThreadLocks>.fromOpaque(p).release() } }
        return key
    }()

    static var current: ThreadLocks {
        if let p = pthread_getspecific(key) { return Unmanaged<ThreadLocks>.fromOpaque(p).takeUnretainedValue() }
        let locks = ThreadLocks()
        pthread_setspecific(key, Unmanaged.passRetained(locks).toOpaque())
        return locks
    }
}
#endif
