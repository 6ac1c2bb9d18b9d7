import FavFSCore
import Foundation

/// The one thread that talks to an SMB server for a provider, with its libsmbclient context.
///
/// Debian 12's libsmbclient is not safe to use from two threads at once, even with a context
/// each: its parameter tables and talloc stack frames are global, and concurrent calls corrupt
/// the heap (four threads doing stats abort within seconds). `smbc_thread_posix`, which would
/// make them per thread, is not exported. So every libsmbclient call of the process runs under
/// one lock (`SMBClientLock`), contexts made and freed included, and each provider has one
/// thread: calls are queued and run one at a time, those of a more urgent task first (a
/// program's read before a background listing of subfolders; in order within a priority).
/// A call that runs is not interrupted: a folder of 100,000 entries is one call of seconds.
/// libsmbclient keeps several reads of one call in flight itself. The thread ends (and frees
/// its context, closing its connection) after `idleTime` without work; the next call starts
/// another.
final class SMBConnections: @unchecked Sendable {
    typealias Job = (Result<SMBContext, ProviderError>) -> Void

    let settings: SMBSettings
    let remote: String
    let idleTime: Double
    private let condition = NSCondition()
    /// Waiting calls: the task's priority, the order they came in, the call.
    private var queue: [(priority: UInt8, order: Int, job: Job)] = []
    private var arrived = 0
    private var running = false

    init(settings: SMBSettings, remote: String, idleTime: Double = 60) {
        self.settings = settings
        self.remote = remote
        self.idleTime = idleTime
    }

    /// Runs `body` with the context, on the provider's thread.
    func run<T: Sendable>(_ body: @escaping @Sendable (SMBContext) throws -> T) async throws -> T {
        let priority = Task.currentPriority.rawValue
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            enqueue(priority: priority) { context in
                continuation.resume(with: Result { try body(context.get()) })
            }
        }
    }

    /// Calls waiting for the thread (for tests).
    var waiting: Int { condition.withLock { queue.count } }

    private func enqueue(priority: UInt8, _ job: @escaping Job) {
        condition.lock()
        arrived += 1
        queue.append((priority, arrived, job))
        let start = !running
        running = true
        condition.signal()
        condition.unlock()
        if start {
            let thread = Thread { [self] in work() }
            thread.name = "favfs-smb"
            thread.start()
        }
    }

    private func work() {
        // Made on this thread at its first call, freed by it when it ends.
        var context: SMBContext?
        defer { if context != nil { SMBClientLock.run { context = nil } } }
        condition.lock()
        while true {
            while queue.isEmpty {
                if !condition.wait(until: Date().addingTimeInterval(idleTime)) && queue.isEmpty {
                    running = false
                    condition.unlock()
                    return
                }
            }
            // The most urgent, then the oldest (a handful wait at most: a scan is cheap).
            var next = 0
            for i in queue.indices.dropFirst() where queue[i].priority > queue[next].priority { next = i }
            let job = queue.remove(at: next).job
            condition.unlock()
            SMBClientLock.run {
                if context == nil {
                    do { context = try SMBContext(settings, remote: remote) }
                    catch { return job(.failure(error as? ProviderError ?? ProviderError(.localIO, remote: remote, detail: "\(error)"))) }
                }
                job(.success(context!))
            }
            condition.lock()
        }
    }
}

/// The process-wide lock every libsmbclient call runs under (see `SMBConnections`). Nothing
/// else is taken while it is held.
enum SMBClientLock {
    private static let lock = NSLock()
    static func run(_ body: () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        body()
    }
}
