import Foundation

/// The domain's face of `Pinning` (the part that owns the pins and their downloads).
extension Domain: PinningHost {
    /// Pins (or unpins) `id`; a folder's pin covers everything below it, also items that appear later.
    public func setPinned(_ id: ItemIdentifier, _ pinned: Bool) async throws {
        let item = try await existingItem(id)
        if pinned { try pinning.pin(item, host: self) } else { try pinning.unpin(id) }
    }

    /// Whether `id` or one of its ancestors is pinned (no network; from memory/store).
    public func isPinned(_ id: ItemIdentifier) -> Bool { pinning.pins.covers(id) }

    /// The pinned folders (for the poller's working set).
    public func pinnedFolders() -> [ItemIdentifier] {
        pinning.pins.all.filter { $0.isRoot || cachedItem($0)?.kind == .folder }
    }

    /// The folders the poller keeps fresh because of pins: every pinned folder and every folder
    /// below one that this mount has listed.
    func pinnedWorkingSet() -> [ItemIdentifier] {
        let roots = pinnedFolders()
        guard !roots.isEmpty else { return [] }
        let loaded = lock.withLock { s in Array(s.namespace.loadedFolders) }
        return roots + loaded.filter { f in roots.contains { r in f.isBelow(r) } }
    }

    /// Starts (in the background, deduplicated) the download of what is missing of a pinned
    /// item. No-op for an unpinned item.
    public func providePinned(_ item: Item) { pinning.provide(item, host: self) }

    /// Fetches whatever is missing of every pinned item (at mount: pins may have changed at
    /// the remote while unmounted).
    public func providePinnedContent() { pinning.provideAll(host: self) }

    func hasLocalChanges(_ id: ItemIdentifier) -> Bool { placeholders.snapshot(id).dirty }

    /// Pins follow `mv` here.
    func movePins(_ from: ItemIdentifier, to: ItemIdentifier) { pinning.move(from, to: to) }

    /// Pins of what was deleted here go with it (a new item of that name is not pinned).
    func dropPins(_ id: ItemIdentifier) { pinning.drop(id) }

    /// Drops the cached content of `id` and of everything below it; placeholders stay. Pins at
    /// or below it are removed first; an item pinned through a folder above it is refused (the
    /// pin would download it again at once). Content open, dirty or still downloading after a
    /// few seconds stays, and the report says why (`SubtreeEviction`).
    public func evict(_ id: ItemIdentifier) async throws -> EvictionReport {
        _ = try await existingItem(id)
        return try await subtreeEviction.evict(id)
    }

    /// The item at `id`, looked up through its parent's listing if need be.
    func existingItem(_ id: ItemIdentifier) async throws -> Item {
        if id.isRoot { return lock.withLock { s in s.namespace.root } }
        guard let parent = id.parent else { throw error(.notFound, id, "no such item") }
        return try await lookup(parent, id.name)
    }

    public func pinStatus() -> PinStatus { pinning.status() }
}
