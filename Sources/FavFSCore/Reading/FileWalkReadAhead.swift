import Foundation
import Logging

/// Read-ahead across files: a program reading a folder's files one after another in name
/// order (`cat *`, `cp -r`, `tar c`, `grep -r`, a thumbnailer) finds the next ones fetched
/// while it reads this one, instead of waiting at each open for a transfer to start and end.
/// It starts only once a file was read to its end and the program opened the next one in name
/// order, and fetches small files only, whole (a larger file has read-ahead within it).
/// Nothing is fetched for a file that is open, changed here, or already here.
final class FileWalkReadAhead: Sendable {
    /// How many files after the one opened are fetched.
    static let depth = 2
    /// How many names after the one opened are looked at for those files (folders are skipped).
    static let lookAt = 16
    /// The largest file fetched ahead: what a read fetches whole where partial reads cost a
    /// connection (`Downloads.readToTheEndBelow`).
    static let largestFile = Downloads.readToTheEndBelow
    /// Folders remembered at most: a walk is in one folder at a time.
    static let foldersRemembered = 64

    private struct State {
        /// Per folder, the last file of it read to its end.
        var readToEnd: [ItemIdentifier: String] = [:]
        /// The files being fetched ahead now.
        var fetching: Set<ItemIdentifier> = []
    }

    private let state = Guarded("FileWalkReadAhead", State())
    private let placeholders: Placeholders
    private let content: ContentCache
    private let downloads: Downloads
    private let provider: any Provider
    private let tasks: OwnedTasks
    private let log = Logger(label: "favfs.domain")

    init(placeholders: Placeholders, content: ContentCache, downloads: Downloads, provider: any Provider, tasks: OwnedTasks) {
        self.placeholders = placeholders
        self.content = content
        self.downloads = downloads
        self.provider = provider
        self.tasks = tasks
    }

    /// A read through a handle of `id` reached the end of the file.
    func readToEnd(_ id: ItemIdentifier) {
        guard let parent = id.parent else { return }
        state.withLock { s in
            if s.readToEnd[parent] == nil && s.readToEnd.count >= Self.foldersRemembered { s.readToEnd.removeAll() }
            s.readToEnd[parent] = id.name
        }
    }

    /// `item` was opened for reading: when the file before it in name order was the last one
    /// read to its end there, the files after it are fetched. Memory only on the caller's
    /// thread (the folder's listing as loaded); the checks that read the store and the
    /// transfers run in the background.
    func opened(_ item: Item) {
        let id = item.identifier
        guard let parent = id.parent, let last = state.withLock({ $0.readToEnd[parent] }) else { return }
        let next = placeholders.lock.withLock { s -> [Item] in
            guard let folder = s.namespace[parent], let i = folder.index(of: id.name) else { return [] }
            let items = folder.items
            guard let before = items[..<i].last(where: { $0.kind == .file }), before.identifier.name == last else { return [] }
            return items[(i + 1)...].prefix(Self.lookAt)
                .filter { $0.kind == .file && $0.size > 0 && $0.size <= Self.largestFile && s.dirty[$0.identifier] == nil }
                .prefix(Self.depth).map { $0 }
        }
        let claimed = state.withLock { s in next.filter { s.fetching.insert($0.identifier).inserted } }
        guard !claimed.isEmpty else { return }
        // One after the other, in order: the next file first, on one connection more.
        let started = tasks.start(priority: .utility) { [self] in
            for candidate in claimed {
                if !Task.isCancelled { await fetch(candidate) }
                state.withLock { _ = $0.fetching.remove(candidate.identifier) }
            }
        }
        if !started { state.withLock { s in for c in claimed { s.fetching.remove(c.identifier) } } }
    }

    /// Fetches the whole of `item` unless it is here already, open, or changed here meanwhile.
    private func fetch(_ item: Item) async {
        let id = item.identifier
        let version = Domain.contentVersion(item)
        guard content.presentBytes(of: id, version: version) < item.size else { return }
        // Changed here since the listing was read: its cache file is the only copy, not ours to fill.
        let (now, dirty) = placeholders.snapshot(id)
        guard !dirty, let now, now.kind == .file, Domain.contentVersion(now) == version else { return }
        // Only an entry nobody uses: an open one (a reader's, a writer's) is left alone.
        guard let entry = content.retainIfUnused(item: item, version: version) else { return }
        defer { content.release(entry, asHandle: false) }
        do {
            try await downloads.provide(entry, item: item, range: 0..<item.size, prefetch: nil, provider: provider)
        } catch {
            log.debug("reading ahead of a walk: \(id) not fetched: \(error)")
        }
    }
}
