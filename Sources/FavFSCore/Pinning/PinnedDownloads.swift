import Foundation

/// The background downloads that keep pinned content on this machine: a queue of files, two at
/// a time, with the numbers `favfs status` shows. A file queued twice is fetched once.
final class PinnedDownloads: @unchecked Sendable {
    /// What `favfs status` shows.
    struct Progress: Sendable, Equatable {
        var filesQueued = 0
        var filesDone = 0
        var bytesQueued: Int64 = 0
        var bytesDone: Int64 = 0
        var failures = 0
        var lastError: String?
        /// The files being downloaded now: their bytes already here count as done.
        var downloading: [Item] = []
        var running: Bool { filesDone + failures < filesQueued }
    }

    static let concurrency = 2
    private let lock = NSLock()
    private var queue: [Item] = []
    private var queued: Set<ItemIdentifier> = []
    private var workers = 0
    private var progress = Progress()

    private var downloading: [ItemIdentifier: Item] = [:]

    var current: Progress {
        lock.withLock {
            var p = progress
            p.downloading = downloading.values.sorted { $0.identifier.rawValue < $1.identifier.rawValue }
            return p
        }
    }

    /// Queues `item`; returns whether a new worker should start (the caller starts it).
    func enqueue(_ item: Item) -> Bool {
        lock.withLock {
            guard queued.insert(item.identifier).inserted else { return false }
            if !progress.running { progress = Progress(lastError: progress.lastError) }
            queue.append(item)
            progress.filesQueued += 1
            progress.bytesQueued += item.size
            guard workers < Self.concurrency else { return false }
            workers += 1
            return true
        }
    }

    /// The next file for a worker, or nil (the worker ends).
    func next() -> Item? {
        lock.withLock {
            if queue.isEmpty { workers -= 1; return nil }
            let item = queue.removeFirst()
            downloading[item.identifier] = item
            return item
        }
    }

    func finished(_ item: Item, error: String?) {
        lock.withLock {
            queued.remove(item.identifier)
            downloading[item.identifier] = nil
            if let error { progress.failures += 1; progress.lastError = error } else {
                progress.filesDone += 1
                progress.bytesDone += item.size
            }
        }
    }
}
