import Foundation

/// Honest status: an item's state in words (`favfs status PATH`) and as extended attributes,
/// and the mount at a glance (`favfs status`), answered from memory and the database, never
/// from the network.
///
/// The attributes (`getfattr -d -m - FILE`):
/// - `user.favfs.state`: `placeholder` | `partial N%` | `materialized` | `dirty` |
///   `uploading N%` | `conflict` (a conflict copy) | `error: …` (an upload that failed) |
///   `upload refused: …` (the server will not take it; kept here and in lost+found);
///   folders `folder`, symlinks `symlink`;
/// - `user.favfs.pin`: `1` or `0` (settable: `setfattr -n user.favfs.pin -v 1 FILE`);
/// - `user.favfs.etag`: the remote's version of the content, where it has one.
final class ItemStatus: Sendable {
    let provider: any Provider
    let content: ContentCache
    /// Placeholders, and the dirty set beside them (`Domain.lock`).
    let placeholders: Placeholders
    let pinning: Pinning
    let writeBack: WriteBack
    /// The host write-back's counts of pending uploads ask (`Writing`).
    let writing: Writing
    /// The last network error.
    let enumerations: Enumerations
    /// The remote's quota as last asked, with when.
    private let lastQuota = Guarded<(at: Double, quota: Quota?)?>("ItemStatus.lastQuota", nil)

    init(provider: any Provider, content: ContentCache, placeholders: Placeholders, pinning: Pinning, writeBack: WriteBack, writing: Writing,
         enumerations: Enumerations) {
        self.provider = provider
        self.content = content
        self.placeholders = placeholders
        self.pinning = pinning
        self.writeBack = writeBack
        self.writing = writing
        self.enumerations = enumerations
    }

    var lock: Guarded<DomainState> { placeholders.lock }
    var store: PlaceholderStore { placeholders.store }
    func cachedItem(_ id: ItemIdentifier) -> Item? { placeholders.cachedItem(id) }
    func isPinned(_ id: ItemIdentifier) -> Bool { pinning.pins.covers(id) }
    func transferProgress(of id: ItemIdentifier) -> (done: Int64, total: Int64)? { content.transfers.progress(of: id) }

    /// Space at the remote (cached for a minute); nil when the remote does not say.
    func quota() async -> Quota? {
        if let q = lastQuota.withLock({ $0 }), Domain.now - q.at < 60 { return q.quota }
        let q = try? await provider.quota()
        lastQuota.withLock { $0 = (Domain.now, q ?? nil) }
        return q ?? nil
    }

    /// An item's state in words, for `favfs status PATH`: folder, placeholder (no content
    /// here), partial N%, materialized, or dirty (changed here, upload pending or failed).
    func state(of id: ItemIdentifier) -> String? {
        guard let item = cachedItem(id) else { return nil }
        if isPinned(id), let plain = unpinnedState(of: id, item) { return plain + ", pinned" }
        return unpinnedState(of: id, item)
    }

    private func unpinnedState(of id: ItemIdentifier, _ item: Item) -> String? {
        if let d = lock.withLock({ s in s.dirty[id] }) {
            if d.journal.refused != nil, let f = d.failure {
                return "dirty: upload refused (\(f)); kept here and in lost+found until it changes or is removed"
            }
            if let f = d.failure { return "dirty: upload failed (\(f)); kept in the cache" }
            return d.uploading ? "dirty: uploading" : "dirty: upload pending (on close)"
        }
        switch item.kind {
        case .folder: return "folder"
        case .symlink: return "symlink"
        case .file:
            let present = content.presentBytes(of: id, version: Domain.contentVersion(item))
            if item.size == 0 || present >= item.size { return "materialized" }
            if present == 0 { return "placeholder" }
            return "partial \(present * 100 / item.size)%"
        }
    }

    func status() -> MountStatus {
        let records = ((try? store.contentByLastUse()) ?? []).filter { !$0.ranges.isEmpty && !pinning.pins.covers($0.id) }
        let pending = writeBack.pendingUploads(host: writing)
        return MountStatus(cachedFiles: records.count,
                      cachedBytes: records.reduce(0) { $0 + $1.ranges.count }, cacheLimit: content.limit,
                      pendingUploads: pending.items, pendingBytes: pending.bytes, failedUploads: pending.failed, refusedUploads: writeBack.refusedUploads(),
                      lastNetworkError: enumerations.reachability.lastNetworkError)
    }

    // MARK: extended attributes

    /// The names `listxattr` gives for `id` (nil: no such item).
    func extendedAttributeNames(of id: ItemIdentifier) -> [String]? {
        guard let item = cachedItem(id) else { return nil }
        return [Domain.stateAttribute, Domain.pinAttribute] + (item.version != nil ? [Domain.etagAttribute] : [])
    }

    /// One attribute's value; nil when the item has no such attribute.
    func extendedAttribute(_ name: String, of id: ItemIdentifier) -> String? {
        guard let item = cachedItem(id) else { return nil }
        switch name {
        case Domain.stateAttribute: return attributeState(of: id, item)
        case Domain.pinAttribute: return isPinned(id) ? "1" : "0"
        case Domain.etagAttribute: return item.version
        default: return nil
        }
    }

    private func attributeState(of id: ItemIdentifier, _ item: Item) -> String {
        if let d = lock.withLock({ s in s.dirty[id] }) {
            if d.journal.refused != nil, let f = d.failure { return "upload refused: \(f)" }
            if let f = d.failure { return "error: \(f)" }
            if d.uploading {
                if let p = transferProgress(of: id), p.total > 0 { return "uploading \(min(100, p.done * 100 / p.total))%" }
                return "uploading 0%"
            }
            return "dirty"
        }
        switch item.kind {
        case .folder: return "folder"
        case .symlink: return "symlink"
        case .file:
            if Self.isConflictCopyName(item.name) { return "conflict" }
            let present = content.presentBytes(of: id, version: Domain.contentVersion(item))
            if item.size == 0 || present >= item.size { return "materialized" }
            if present == 0 { return "placeholder" }
            return "partial \(present * 100 / item.size)%"
        }
    }

    /// Whether `name` is one `conflictName` makes: `NAME (conflict YYYY-MM-DD HHMMSS[ N]).EXT`.
    static func isConflictCopyName(_ name: String) -> Bool {
        name.range(of: #" \(conflict \d{4}-\d{2}-\d{2} \d{6}( \d+)?\)"#, options: .regularExpression) != nil
    }
}
