import Foundation

/// Pinning (File Provider's "download eagerly and keep downloaded"): a pinned file is fetched
/// in the background, kept up to date by the poller, never evicted (by the LRU or at unmount)
/// and readable offline; a pinned folder's pin covers everything below it, also items that
/// appear later. Pins are kept in the database across mounts.
extension Domain {
    /// Pins (or unpins) `id`; a folder's pin covers everything below it, also items that appear later.
    public func setPinned(_ id: ItemIdentifier, _ pinned: Bool) async throws {
        let item = try await existingItem(id)
        if pinned {
            do { try store.addPin(id) } catch { throw self.error(.localIO, id, "cannot record the pin: \(error)") }
            pins.add(id)
            log.info("pinned \(id)")
            providePinned(item)
        } else {
            if let root = pins.root(covering: id), root != id {
                throw self.error(.invalidName, id, "pinned through \(root.rawValue): unpin that folder instead")
            }
            do { try store.removePin(id) } catch { throw self.error(.localIO, id, "cannot remove the pin: \(error)") }
            pins.remove(id)
            log.info("unpinned \(id)")
            // Unpinned content counts against --cache-size again.
            content.scheduleEviction()
        }
    }

    /// Whether `id` or one of its ancestors is pinned (no network; from memory/store).
    public func isPinned(_ id: ItemIdentifier) -> Bool { pins.covers(id) }

    /// The pinned items (folders and files) as the user pinned them.

    /// The pinned folders (for the poller's working set).
    public func pinnedFolders() -> [ItemIdentifier] {
        pins.all.filter { $0.isRoot || cachedItem($0)?.kind == .folder }
    }

    /// The folders the poller keeps fresh because of pins: every pinned folder and every folder
    /// below one that this mount has listed.
    func pinnedWorkingSet() -> [ItemIdentifier] {
        let roots = pinnedFolders()
        guard !roots.isEmpty else { return [] }
        let loaded = lock.withLock { Array(namespace.loadedFolders) }
        return roots + loaded.filter { f in roots.contains { r in r.isRoot || f.rawValue.hasPrefix(r.rawValue + "/") } }
    }

    /// Starts (in the background, deduplicated) the download of a pinned file whose content is missing or of an
    /// older version; for a pinned folder, of everything below it. No-op for an unpinned item.
    public func providePinned(_ item: Item) {
        guard pins.covers(item.identifier) else { return }
        switch item.kind {
        case .symlink: return
        case .folder:
            tasks.start(priority: .utility) { [self] in await providePinnedFolder(item.identifier) }
        case .file:
            let present = content.presentBytes(of: item.identifier, version: Self.contentVersion(item))
            guard present < item.size else { return }
            if pinnedDownloads.enqueue(item) {
                tasks.start(priority: .utility) { [self] in await runPinnedDownloads() }
            }
        }
    }

    /// Fetches whatever is missing of every pinned item (at mount: pins may have changed at
    /// the remote while unmounted).
    public func providePinnedContent() {
        for id in pins.all {
            if let item = cachedItem(id) { providePinned(item) }
        }
    }

    /// Lists `folder` and queues what is below it, folder by folder.
    private func providePinnedFolder(_ folder: ItemIdentifier) async {
        var pending = [folder]
        while let f = pending.popLast() {
            guard pins.covers(f) else { continue }
            do {
                for child in try await children(of: f) {
                    if child.kind == .folder { pending.append(child.identifier) } else { providePinned(child) }
                }
            } catch {
                log.warning("cannot list pinned folder \(f): \(error)")
            }
        }
    }

    private func runPinnedDownloads() async {
        while let item = pinnedDownloads.next() {
            // Only what is still pinned and still this version.
            guard pins.covers(item.identifier), let current = cachedItem(item.identifier), current.kind == .file else {
                pinnedDownloads.finished(item, error: nil)
                continue
            }
            do {
                try await materialize(current)
                pinnedDownloads.finished(item, error: nil)
            } catch {
                log.warning("cannot download pinned \(item.identifier): \(error)")
                pinnedDownloads.finished(item, error: "\(item.identifier.rawValue): \(error)")
            }
        }
    }

    /// startProviding of a whole file, outside any handle.
    private func materialize(_ item: Item) async throws {
        let (_, isDirty) = snapshot(item.identifier)
        if isDirty { return }   // its content is here already, and newer
        let entry = try content.retain(item: item, version: Self.contentVersion(item), asHandle: false)
        defer { content.release(entry, asHandle: false) }
        guard item.size > 0 else { return }
        try await content.provide(entry, item: item, range: 0..<item.size, prefetch: nil, provider: provider)
    }

    /// Pins follow `mv` here.
    func movePins(_ from: ItemIdentifier, to: ItemIdentifier) {
        guard !pins.all.isEmpty else { return }
        try? store.movePins(from, to: to)
        pins.move(from, to: to)
    }

    /// Pins of what was deleted here go with it (a new item of that name is not pinned).
    func dropPins(_ id: ItemIdentifier) {
        guard pins.all.contains(where: { $0 == id || $0.rawValue.hasPrefix(id.rawValue + "/") }) else { return }
        try? store.removePin(id)
        pins.remove(id)
    }

    /// The item at `id`, looked up through its parent's listing if need be.
    func existingItem(_ id: ItemIdentifier) async throws -> Item {
        if id.isRoot { return lock.withLock { namespace.root } }
        guard let parent = id.parent else { throw error(.notFound, id, "no such item") }
        return try await lookup(parent, id.name)
    }

    /// What pinning holds and does now, for `favfs status`.
    public struct PinStatus: Sendable {
        /// The pinned items as the user pinned them.
        public var pinned: [ItemIdentifier]
        /// Content of pinned files on this machine.
        public var files: Int
        public var bytes: Int64
        /// Background downloads of pinned content: done and queued since they last started.
        public var downloadFilesDone: Int
        public var downloadFilesQueued: Int
        public var downloadBytesDone: Int64
        public var downloadBytesQueued: Int64
        public var downloadFailures: Int
        public var lastError: String?
    }

    public func pinStatus() -> PinStatus {
        let records = ((try? store.contentByLastUse()) ?? []).filter { !$0.ranges.isEmpty && pins.covers($0.id) }
        let p = pinnedDownloads.current
        // A large file's progress shows as its chunks arrive, not only once it is whole.
        let arriving = p.downloading.reduce(Int64(0)) { $0 + content.presentBytes(of: $1.identifier, version: Self.contentVersion($1)) }
        return PinStatus(pinned: pins.all, files: records.count, bytes: records.reduce(0) { $0 + $1.ranges.count },
                         downloadFilesDone: p.filesDone, downloadFilesQueued: p.filesQueued,
                         downloadBytesDone: min(p.bytesQueued, p.bytesDone + arriving), downloadBytesQueued: p.bytesQueued,
                         downloadFailures: p.failures, lastError: p.lastError)
    }
}
