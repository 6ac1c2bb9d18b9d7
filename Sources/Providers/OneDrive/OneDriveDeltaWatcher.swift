import FavFSCore
import Foundation
import Logging

/// The task that asks Graph's `delta` what changed in the drive every `interval` seconds while
/// the mount watches, and tells the mount which folders to list again. It holds the provider
/// weakly and is cancelled by `stop()` (the provider's deinit): it never outlives its provider.
/// Failures are logged (the first of a run, then every tenth) and space the calls out, up to
/// twelve intervals apart; the mount's own poller stays the safety net.
final class OneDriveDeltaWatcher: @unchecked Sendable {
    let interval: Double
    private let remote: String
    private let lock = NSLock()
    // Guarded by `lock`.
    private var task: Task<Void, Never>?
    private var live = true
    private var link: String?
    private var rounds = 0
    private let log = Logger(label: "favfs.onedrive.delta")

    init(interval: Double, remote: String) {
        self.interval = interval; self.remote = remote
    }

    /// The `@odata.deltaLink` to ask next (nil: start again from `token=latest`).
    var deltaLink: String? {
        get { lock.withLock { link } }
        set { lock.withLock { link = newValue } }
    }

    /// Rounds completed (tests: the watcher is running and stops).
    var completedRounds: Int { lock.withLock { rounds } }

    /// Starts calling `round` (idempotent): each returns the folders that changed, which go to
    /// `onChange`.
    func start(_ provider: OneDriveProvider, onChange: @escaping @Sendable (ItemIdentifier) -> Void) {
        let interval = self.interval
        lock.withLock {
            guard task == nil, interval > 0 else { return }
            task = Task.detached(priority: .utility) { [weak provider, weak self] in
                var failures = 0
                while !Task.isCancelled {
                    guard let provider else { return }
                    do {
                        let changed = try await provider.changedFolders()
                        if failures > 0 { provider.watcher.log.info("delta works again", metadata: ["remote": "\(provider.remoteDescription)"]) }
                        failures = 0
                        for folder in changed.sorted() { onChange(folder) }
                    } catch {
                        if Task.isCancelled { return }
                        failures += 1
                        if failures == 1 || failures % 10 == 0 {
                            self?.log.warning("delta failed; changes made elsewhere are found by polling until it works again",
                                              metadata: ["remote": "\(provider.remoteDescription)", "failures": "\(failures)", "error": "\(error)"])
                        }
                    }
                    self?.lock.withLock { self?.rounds += 1; self?.live = failures == 0 }
                    // A failure is tried again after one interval, then two, four... up to twelve.
                    let pause = interval * Double(min(12, 1 << min(max(0, failures - 1), 4)))
                    try? await Task.sleep(nanoseconds: UInt64(pause * 1_000_000_000))
                }
            }
        }
    }

    func stop() {
        lock.withLock {
            task?.cancel()
            task = nil
        }
    }

    /// Cancels the rounds and waits for the one running to end, 5 s at most (a `delta` call in
    /// flight is cancelled with it).
    func stopAndWait() async {
        let running = lock.withLock { () -> Task<Void, Never>? in
            defer { task = nil }
            task?.cancel()
            return task
        }
        guard let running else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await running.value }
            group.addTask { try? await Task.sleep(nanoseconds: 5_000_000_000) }
            await group.next()
            group.cancelAll()
        }
    }

    /// False while `delta` keeps failing (the poller then lists watched folders every round).
    var isLive: Bool { lock.withLock { live } }

    deinit { task?.cancel() }
}
