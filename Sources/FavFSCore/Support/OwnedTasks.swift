import Foundation

/// The background tasks one part started (uploads, quiet-time waits, read-ahead, pinned
/// downloads, enumerations): it owns them, so its shutdown can cancel them and wait for them, and an unmount
/// leaves none running behind the database it closes. A task removes itself when it ends.
public final class OwnedTasks: Sendable {
    private struct State {
        var next: UInt64 = 0
        /// Each running task's cancellation.
        var running: [UInt64: @Sendable () -> Void] = [:]
        var closed = false
    }
    /// Behind a pthread lock, not `Synchronization.Mutex`: on Linux the Mutex waits on a futex
    /// inside the standard library, which ThreadSanitizer does not see, and every access of
    /// the state showed up as a race (`make sanitize`).
    private let state = Guarded("OwnedTasks", State())

    public init() {}

    /// Starts `operation` as a task owned here. False (nothing started) once `shutdown` began:
    /// work asked for then is left for the next mount (a dirty item stays in the journal).
    @discardableResult
    public func start(priority: TaskPriority? = nil, _ operation: @escaping @Sendable () async -> Void) -> Bool {
        run(priority: priority) { await operation() } != nil
    }

    /// Starts `operation` as a task owned here and returns it, for callers that wait for its
    /// result (an enumeration shared by everyone waiting for that folder). Nil once
    /// `shutdown` began.
    public func run<T: Sendable>(priority: TaskPriority? = nil,
                                 _ operation: @escaping @Sendable () async throws -> T) -> Task<T, Error>? {
        state.withLock { s in
            guard !s.closed else { return nil }
            let id = s.next
            s.next += 1
            // Registered under the lock the task's end takes: it cannot end unregistered.
            let task = Task<T, Error>(priority: priority) { [self] in
                defer { _ = state.withLock { $0.running.removeValue(forKey: id) } }
                return try await operation()
            }
            s.running[id] = { task.cancel() }
            return task
        }
    }

    /// How many tasks run now.
    public var count: Int { state.withLock { $0.running.count } }

    /// Refuses new tasks, cancels the running ones and waits for them, at most `seconds`.
    /// Returns how many were still running then (a provider call that ignores cancellation):
    /// they are left behind, and the caller says so.
    public func shutdown(within seconds: Double) async -> Int {
        let cancels = state.withLock { s -> [@Sendable () -> Void] in
            s.closed = true
            return Array(s.running.values)
        }
        for cancel in cancels { cancel() }
        let deadline = Date().addingTimeInterval(seconds)
        while count > 0 && Date() < deadline {
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return count
    }
}
