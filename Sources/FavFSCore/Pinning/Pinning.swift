import Foundation
import Logging

/// What pinning asks of the rest of the core (the domain): listings and placeholders.
protocol PinningHost: AnyObject, Sendable {
    /// The children of `folder`, listed if need be.
    func children(of folder: ItemIdentifier) async throws -> [Item]
    /// The placeholder of `id`, from memory or the store. No network.
    func cachedItem(_ id: ItemIdentifier) -> Item?
    /// Whether `id` has changes here not yet uploaded (its content is here, and newer).
    func hasLocalChanges(_ id: ItemIdentifier) -> Bool
}

/// Pinning (File Provider's "download eagerly and keep downloaded"): a pinned file is fetched
/// in the background, kept up to date by the poller, never evicted (by the LRU or at unmount)
/// and readable offline; a pinned folder's pin covers everything below it, also items that
/// appear later. Pins are kept in the store across mounts.
///
/// Its own state (the pins, the download queue) behind their own leaf locks, and its own
/// background work (`stop` cancels it); it reaches the namespace only through `PinningHost`.
final class Pinning: Sendable, ReportsRemoteErrors {
    /// The pinned items (also in the store).
    let pins: PinSet
    private let downloads = PinnedDownloads()
    /// Folder walks and downloads of pinned content.
    private let tasks = OwnedTasks()
    private let store: PlaceholderStore
    private let content: ContentCache
    /// Fetches pinned content into the cache.
    private let fetches: Downloads
    let provider: any Provider
    private let log = Logger(label: "favfs.pinning")

    /// `pins`: as read from the store at mount (eviction keeps what they cover).
    init(pins: PinSet, store: PlaceholderStore, content: ContentCache, downloads fetches: Downloads, provider: any Provider) {
        self.pins = pins
        self.store = store
        self.content = content
        self.fetches = fetches
        self.provider = provider
    }

    private var eviction: Eviction { fetches.eviction }

    // MARK: pins

    /// Pins `item` (recorded first) and starts fetching what is missing of it.
    func pin(_ item: Item, host: any PinningHost) throws {
        let id = item.identifier
        do { try store.addPin(id) } catch { throw self.error(.localIO, id, "cannot record the pin: \(error)") }
        pins.add(id)
        log.info("pinned \(id)")
        provide(item, host: host)
    }

    /// Unpins `id`; refused for an item pinned through a folder above it.
    func unpin(_ id: ItemIdentifier) throws {
        if let root = pins.root(covering: id), root != id {
            throw error(.invalidName, id, "pinned through \(root.rawValue): unpin that folder instead")
        }
        do { try store.removePin(id) } catch { throw self.error(.localIO, id, "cannot remove the pin: \(error)") }
        pins.remove(id)
        log.info("unpinned \(id)")
        // Unpinned content counts against --cache-size again.
        eviction.schedule()
    }

    /// Removes the pins at and below `id` before its content is freed; returns them. Refused
    /// for an item pinned through a folder above it (the pin would download it again at once).
    func unpinToFreeSpace(_ id: ItemIdentifier) throws -> [ItemIdentifier] {
        if let root = pins.root(covering: id), root != id {
            throw error(.invalidName, id, "pinned through \(root.rawValue): unpin that folder, or free up space on it")
        }
        let unpinned = pins.all.filter { $0.isAtOrBelow(id) }
        guard !unpinned.isEmpty else { return [] }
        do { try store.removePin(id) } catch { throw self.error(.localIO, id, "cannot remove the pin: \(error)") }
        pins.remove(id)
        log.info("unpinned \(unpinned.map(\.rawValue).joined(separator: ", ")) to free up space")
        return unpinned
    }

    /// Pins follow `mv` here.
    func move(_ from: ItemIdentifier, to: ItemIdentifier) {
        guard !pins.all.isEmpty else { return }
        try? store.movePins(from, to: to)
        pins.move(from, to: to)
    }

    /// Pins of what was deleted (here or at the remote) go with it: a new item of that name is
    /// not pinned.
    func drop(_ id: ItemIdentifier) {
        guard pins.all.contains(where: { $0.isAtOrBelow(id) }) else { return }
        try? store.removePin(id)
        pins.remove(id)
    }

    // MARK: downloads

    /// Starts (in the background, deduplicated) the download of a pinned file whose content is
    /// missing or of an older version; for a pinned folder, of everything below it. No-op for
    /// an unpinned item.
    func provide(_ item: Item, host: any PinningHost) {
        guard pins.covers(item.identifier) else { return }
        switch item.kind {
        case .symlink: return
        case .folder:
            tasks.start(priority: .utility) { [self] in await provideFolder(item.identifier, host: host) }
        case .file:
            let present = content.presentBytes(of: item.identifier, version: Domain.contentVersion(item))
            guard present < item.size else { return }
            if downloads.enqueue(item) {
                tasks.start(priority: .utility) { [self] in await runDownloads(host: host) }
            }
        }
    }

    /// Fetches whatever is missing of every pinned item (at mount: pins may have changed at
    /// the remote while unmounted).
    func provideAll(host: any PinningHost) {
        for id in pins.all {
            if let item = host.cachedItem(id) { provide(item, host: host) }
        }
    }

    /// Lists `folder` and queues what is below it, folder by folder.
    private func provideFolder(_ folder: ItemIdentifier, host: any PinningHost) async {
        var pending = [folder]
        while let f = pending.popLast() {
            guard pins.covers(f), !Task.isCancelled else { continue }
            do {
                for child in try await host.children(of: f) {
                    if child.kind == .folder { pending.append(child.identifier) } else { provide(child, host: host) }
                }
            } catch {
                log.warning("cannot list pinned folder \(f): \(error)")
            }
        }
    }

    private func runDownloads(host: any PinningHost) async {
        while let item = downloads.next() {
            // Only what is still pinned and still this version.
            guard !Task.isCancelled, pins.covers(item.identifier), let current = host.cachedItem(item.identifier),
                  current.kind == .file else {
                downloads.finished(item, error: nil)
                continue
            }
            do {
                try await materialize(current, host: host)
                downloads.finished(item, error: nil)
            } catch {
                log.warning("cannot download pinned \(item.identifier): \(error)")
                downloads.finished(item, error: "\(item.identifier.rawValue): \(error)")
            }
        }
    }

    /// startProviding of a whole file, outside any handle.
    private func materialize(_ item: Item, host: any PinningHost) async throws {
        if host.hasLocalChanges(item.identifier) { return }   // its content is here already, and newer
        let entry = try content.retain(item: item, version: Domain.contentVersion(item), asHandle: false)
        defer { content.release(entry, asHandle: false) }
        guard item.size > 0 else { return }
        try await fetches.provide(entry, item: item, range: 0..<item.size, prefetch: nil, provider: provider)
    }

    // MARK: status and shutdown

    /// What pinning holds and does now, for `favfs status`.
    func status() -> PinStatus {
        let records = ((try? store.contentByLastUse()) ?? []).filter { !$0.ranges.isEmpty && pins.covers($0.id) }
        let p = downloads.current
        // A large file's progress shows as its chunks arrive, not only once it is whole.
        let arriving = p.downloading.reduce(Int64(0)) { $0 + content.presentBytes(of: $1.identifier, version: Domain.contentVersion($1)) }
        return PinStatus(pinned: pins.all, files: records.count, bytes: records.reduce(0) { $0 + $1.ranges.count },
                                downloadFilesDone: p.filesDone, downloadFilesQueued: p.filesQueued,
                                downloadBytesDone: min(p.bytesQueued, p.bytesDone + arriving), downloadBytesQueued: p.bytesQueued,
                                downloadFailures: p.failures, lastError: p.lastError)
    }

    /// Refuses new work, cancels what runs and waits for it, at most `seconds`; returns how
    /// many tasks were still running then.
    func stop(within seconds: Double) async -> Int {
        await tasks.shutdown(within: seconds)
    }
}
