import Foundation

/// An item's state as extended attributes (`getfattr -d -m - FILE`), answered from memory and
/// the database, never from the network:
/// - `user.favfs.state`: `placeholder` | `partial N%` | `materialized` | `dirty` |
///   `uploading N%` | `conflict` (a conflict copy) | `error: …` (an upload that failed) |
///   `upload refused: …` (the server will not take it; kept here and in lost+found);
///   folders `folder`, symlinks `symlink`;
/// - `user.favfs.pin`: `1` or `0` (settable: `setfattr -n user.favfs.pin -v 1 FILE`);
/// - `user.favfs.etag`: the remote's version of the content, where it has one.
extension Domain {
    public static let stateAttribute = "user.favfs.state"
    public static let pinAttribute = "user.favfs.pin"
    public static let etagAttribute = "user.favfs.etag"

    /// The names `listxattr` gives for `id` (nil: no such item).
    public func extendedAttributeNames(of id: ItemIdentifier) -> [String]? {
        guard let item = cachedItem(id) else { return nil }
        return [Self.stateAttribute, Self.pinAttribute] + (item.version != nil ? [Self.etagAttribute] : [])
    }

    /// One attribute's value; nil when the item has no such attribute.
    public func extendedAttribute(_ name: String, of id: ItemIdentifier) -> String? {
        guard let item = cachedItem(id) else { return nil }
        switch name {
        case Self.stateAttribute: return attributeState(of: id, item)
        case Self.pinAttribute: return isPinned(id) ? "1" : "0"
        case Self.etagAttribute: return item.version
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
            let present = content.presentBytes(of: id, version: Self.contentVersion(item))
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
