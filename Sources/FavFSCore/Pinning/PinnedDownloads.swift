import Foundation

/// The background downloads that keep pinned content on this machine: a queue of files, two at
/// a time, with the numbers `favfs status` shows. A file queued twice is fetched once.
final class PinnedDownloads: Sendable {
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
    private let state = Guarded("PinnedDownloads", State())

    private struct State {
        var queue: [Item] = []
        var queued: Set<ItemIdentifier> = []
        var workers = 0
        var progress = Progress()
        var downloading: [ItemIdentifier: Item] = [:]
    }

    var current: Progress {
        state.withLock { s in
            var p = s.progress
            p.downloading = s.downloading.values.sorted { $0.identifier.rawValue < $1.identifier.rawValue }
            return p
        }
    }

    /// Queues `item`; returns whether a new worker should start (the caller starts it).
    func enqueue(_ item: Item) -> Bool {
        state.withLock { s in
            guard s.queued.insert(item.identifier).inserted else { return false }
            if !s.progress.running { s.progress = Progress(lastError: s.progress.lastError) }
            s.queue.append(item)
            s.progress.filesQueued += 1
            s.progress.bytesQueued += item.size
            guard s.workers < Self.concurrency else { return false }
            s.workers += 1
            return true
        }
    }

    /// The next file for a worker, or nil (the worker ends).
    func next() -> Item? {
        state.withLock { s in
            if s.queue.isEmpty { s.workers -= 1; return nil }
            let item = s.queue.removeFirst()
            s.downloading[item.identifier] = item
            return item
        }
    }

    func finished(_ item: Item, error: String?) {
        state.withLock { s in
            s.queued.remove(item.identifier)
            s.downloading[item.identifier] = nil
            if let error { s.progress.failures += 1; s.progress.lastError = error } else {
                s.progress.filesDone += 1
                s.progress.bytesDone += item.size
            }
        }
    }
}
