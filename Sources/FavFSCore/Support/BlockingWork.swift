import Dispatch
import Foundation
import Glibc

/// Runs long synchronous work (parsing a 40 MB listing, saving 100,000 placeholders) on threads
/// of its own, not on Swift's cooperative pool. The pool has one thread per core (two here):
/// two background listings parsing at once would otherwise leave no thread to start a
/// reader's download, and a first byte would wait for seconds.
public enum BlockingWork {
    private static let queue = DispatchQueue(label: "favfs.blocking", qos: .utility, attributes: .concurrent)

    /// Runs `body` on the blocking-work threads and returns its result.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                // Nice +5 (per thread on Linux): parsing and saving listings yield the CPU to
                // readers when both want it, and run at full speed when nothing else does.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 5)
                continuation.resume(with: Result { try body() })
            }
        }
    }

    /// Runs `body` on a thread of its own, for work that waits on something else to happen
    /// (a parse following a download as it arrives). Such a wait must not hold a dispatch
    /// thread: on Linux Swift's tasks run on the same pool, the task that would end the wait
    /// could not run, and dispatch adds a thread only after about a second (seen: `find` over
    /// 100 folders 0.3 s -> 3 s).
    public static func runOnOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 5)
                continuation.resume(with: Result { try body() })
            }
            thread.name = "favfs-follow"
            thread.start()
        }
    }
}
