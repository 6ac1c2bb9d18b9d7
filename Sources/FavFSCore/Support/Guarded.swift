import Foundation

/// State reachable only while its lock is held: the compiler, not a comment, keeps it guarded.
/// The lock is a `WitnessedLock`, so in debug builds a store call made inside `withLock`
/// is recorded (see `StoreWitness`). `withLock` does not nest: a body that takes it again
/// deadlocks, so functions that need the state while it is held take it as `inout`.
final class Guarded<State>: @unchecked Sendable {
    private let lock: WitnessedLock
    private var state: State

    /// `name` is the lock's, as the lock order and `StoreWitness` call it; `readsAllowed`:
    /// store reads under it are accepted, writes are not (`WitnessedLock`).
    init(_ name: String, readsAllowed: Bool = false, _ initial: State) {
        lock = WitnessedLock(name, readsAllowed: readsAllowed)
        state = initial
    }

    /// Runs `body` with the state, under the lock.
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
