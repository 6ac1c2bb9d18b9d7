import Foundation

/// The deadlines of every pending request, kept by one thread. A sleeping task per request
/// cost a timer armed and cancelled through Dispatch's manager thread for each (5% of favfs's
/// CPU copying small files); here a deadline is a dictionary entry, and the thread wakes only
/// when the earliest one is due (normally `--timeout` away).
final class DeadlineTimer: @unchecked Sendable {
    static let shared = DeadlineTimer()

    private struct Entry { let at: Double; let fire: @Sendable () -> Void }
    private let condition = NSCondition()
    private var entries: [UInt: Entry] = [:]
    private var next: UInt = 1
    /// When the thread wakes next (it may find that entry answered and gone: it then looks again).
    private var wakeAt = Double.infinity
    private var started = false

    /// Calls `fire` on the timer thread after `seconds` unless `cancel` came first. `fire` must
    /// not block (it replies to the kernel). Returns the key for `cancel`.
    func add(after seconds: Double, _ fire: @escaping @Sendable () -> Void) -> UInt {
        condition.lock()
        defer { condition.unlock() }
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "favfs-deadlines"
            thread.start()
        }
        let key = next
        next += 1
        let at = Self.now() + seconds
        entries[key] = Entry(at: at, fire: fire)
        if at < wakeAt {
            wakeAt = at
            condition.signal()
        }
        return key
    }

    func cancel(_ key: UInt) {
        guard key != 0 else { return }
        condition.lock()
        entries[key] = nil
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            let now = Self.now()
            var due: [Entry] = []
            var earliest = Double.infinity
            for (key, entry) in entries {
                if entry.at <= now {
                    due.append(entry)
                    entries[key] = nil
                } else {
                    earliest = min(earliest, entry.at)
                }
            }
            wakeAt = earliest
            if !due.isEmpty {
                condition.unlock()
                for entry in due { entry.fire() }
                condition.lock()
                continue
            }
            if earliest == .infinity {
                condition.wait()
            } else {
                _ = condition.wait(until: Date(timeIntervalSinceNow: earliest - now))
            }
        }
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
