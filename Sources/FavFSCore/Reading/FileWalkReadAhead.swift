import Foundation
import Logging

/// Read-ahead across files: a program reading a folder's files one after another in name
/// order (`cat *`, `cp -r`, `tar c`, `grep -r`, a thumbnailer) finds the next ones fetched
/// while it reads this one, instead of waiting at each open for a transfer to start and end.
/// It starts only once a file was read to its end and the program opened the next one in name
/// order, and fetches small files only, whole (a larger file has read-ahead within it).
/// Nothing is fetched for a file that is changed here or already here, nor for one a writer
/// has open.
///
/// A folder's walk is fetched by one task, in name order, the file just opened first (its
/// reader's reads and the walk share that transfer), that file and `depth` more at a time —
/// one at a time where each connection logs in anew (`connectionsCostALogin`: FTP, where vsftpd's PAM hashes
/// the password for tens of milliseconds, and the reader waited for those logins instead of
/// for the bytes when a task per open ran two or three transfers side by side).
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
        /// The files queued or being fetched ahead now.
        var fetching: Set<ItemIdentifier> = []
        /// Per folder whose walk task runs: the files it fetches next, in order.
        var queued: [ItemIdentifier: [Item]] = [:]
    }

    private let state = Guarded("FileWalkReadAhead", State())
    private let placeholders: Placeholders
    private let content: ContentCache
    private let downloads: Downloads
    private let handles: HandleTable
    private let provider: any Provider
    private let tasks: OwnedTasks
    private let log = Logger(label: "favfs.domain")

    init(placeholders: Placeholders, content: ContentCache, downloads: Downloads, handles: HandleTable,
         provider: any Provider, tasks: OwnedTasks) {
        self.placeholders = placeholders
        self.content = content
        self.downloads = downloads
        self.handles = handles
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
    /// read to its end there, it and the files after it are fetched. Memory only on the
    /// caller's thread (the folder's listing as loaded); the checks that read the store and the
    /// transfers run in the background.
    func opened(_ item: Item) {
        let id = item.identifier
        guard let parent = id.parent, let last = state.withLock({ $0.readToEnd[parent] }) else { return }
        let files = placeholders.lock.withLock { s -> [Item] in
            guard let folder = s.namespace[parent], let i = folder.index(of: id.name) else { return [] }
            let items = folder.items
            guard let before = items[..<i].last(where: { $0.kind == .file }), before.identifier.name == last else { return [] }
            let next = items[(i + 1)...].prefix(Self.lookAt)
                .filter { Self.fetchable($0) && s.dirty[$0.identifier] == nil }
                .prefix(Self.depth)
            return (Self.fetchable(item) && s.dirty[id] == nil ? [item] : []) + next
        }
        let startTask = state.withLock { s -> Bool in
            let claimed = files.filter { s.fetching.insert($0.identifier).inserted }
            guard !claimed.isEmpty else { return false }
            if s.queued[parent] != nil {
                s.queued[parent]!.append(contentsOf: claimed)
                return false
            }
            s.queued[parent] = claimed
            return true
        }
        guard startTask else { return }
        let width = provider.capabilities.contains(.connectionsCostALogin) ? 1 : Self.depth + 1
        let started = tasks.start(priority: .utility) { [self] in
            await withTaskGroup(of: Void.self) { group in
                var running = 0
                while true {
                    if running < width, let next = nextFile(in: parent, endIfNone: running == 0) {
                        running += 1
                        group.addTask { [self] in
                            if !Task.isCancelled { await fetch(next) }
                            state.withLock { _ = $0.fetching.remove(next.identifier) }
                        }
                        continue
                    }
                    guard running > 0 else { break }
                    await group.next()
                    running -= 1
                }
            }
        }
        if !started {
            state.withLock { s in
                for f in s.queued.removeValue(forKey: parent) ?? [] { s.fetching.remove(f.identifier) }
            }
        }
    }

    private static func fetchable(_ item: Item) -> Bool { item.kind == .file && item.size > 0 && item.size <= largestFile }

    /// The next file of `parent`'s walk; nil when none is queued, and with `endIfNone` the
    /// walk's task then ends (a later open starts another).
    private func nextFile(in parent: ItemIdentifier, endIfNone: Bool) -> Item? {
        state.withLock { s in
            guard var queue = s.queued[parent], !queue.isEmpty else {
                if endIfNone { s.queued[parent] = nil }
                return nil
            }
            let item = queue.removeFirst()
            s.queued[parent] = queue
            return item
        }
    }

    /// Fetches the whole of `item` unless it is here already, changed here meanwhile, or open
    /// for writing.
    private func fetch(_ item: Item) async {
        let id = item.identifier
        let version = Domain.contentVersion(item)
        guard content.presentBytes(of: id, version: version) < item.size else { return }
        // Changed here since the listing was read: its cache file is the only copy, not ours to fill.
        let (now, dirty) = placeholders.snapshot(id)
        guard !dirty, let now, now.kind == .file, Domain.contentVersion(now) == version else { return }
        // An entry nobody uses, or one only readers have open (the walk's reader among them: the
        // reads wait for this transfer, or this one for theirs). A writer's is left alone.
        guard let entry = content.retainIfUnused(item: item, version: version) ?? readersEntry(id, version: version) else { return }
        defer { content.release(entry, asHandle: false) }
        do {
            try await downloads.provide(entry, item: item, range: 0..<item.size, prefetch: nil, provider: provider)
        } catch {
            log.debug("reading ahead of a walk: \(id) not fetched: \(error)")
        }
    }

    /// The entry of `id` at `version` held, when open handles use it and none of them writes.
    private func readersEntry(_ id: ItemIdentifier, version: String) -> ContentEntry? {
        guard let e = content.openEntry(id), e.withLock({ $0.version == version }), !handles.hasWriter(of: e) else { return nil }
        return content.holdIfInUse(e) ? e : nil
    }
}
