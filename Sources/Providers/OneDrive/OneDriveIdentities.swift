import FavFSCore
import Foundation

/// Graph's item ids and the paths they were last seen at. `delta` names what changed by id
/// (its answers carry no paths: a renamed folder's descendants are not in them), so a change
/// can be told to the mount only for items and folders it has listed or looked at.
final class OneDriveIdentities: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var paths: [String: ItemIdentifier] = [:]

    /// Remembers that the driveItem `object` is at `id`.
    func learn(_ object: [String: Any], at id: ItemIdentifier) {
        guard let key = object["id"] as? String, !key.isEmpty else { return }
        lock.withLock { move(key, to: id) }
    }

    /// Every folder holding an item this mount has seen, and the root: what may have changed
    /// when delta cannot say (`resyncRequired`).
    func knownFolders() -> Set<ItemIdentifier> {
        lock.withLock { Set(paths.values.compactMap(\.parent)).union([.rootContainer]) }
    }

    /// The path last seen for the item `key`.
    func path(of key: String) -> ItemIdentifier? { lock.withLock { paths[key] } }

    /// Applies one `delta` entry; returns the folders whose listing it changes: the one it was
    /// in and the one it is in now, where those are known.
    func apply(_ entry: [String: Any]) -> Set<ItemIdentifier> {
        guard let key = entry["id"] as? String, entry["root"] == nil else { return [] }
        return lock.withLock {
            var changed = Set<ItemIdentifier>()
            let old = paths[key]
            // The remote's root itself: its parent is outside the remote (often never seen), and
            // its own changes are its children's, reported with them.
            if old?.isRoot == true { return changed }
            if let parent = old?.parent { changed.insert(parent) }
            let parentKey = (entry["parentReference"] as? [String: Any])?["id"] as? String
            let parent = parentKey.flatMap { paths[$0] }
            if entry["deleted"] != nil {
                if let old { forget(key, below: old) }
                return changed
            }
            if let parent {
                changed.insert(parent)
                if let name = entry["name"] as? String, ItemIdentifier.validate(name: name) == nil {
                    move(key, to: parent.child(name))
                }
            } else if let old {
                // Moved out of what this mount knows.
                forget(key, below: old)
            }
            return changed
        }
    }

    /// Records `key` at `id`; when a folder moved, what was below it moves too. Lock held.
    private func move(_ key: String, to id: ItemIdentifier) {
        if let old = paths[key], old != id, !old.isRoot {
            let prefix = old.rawValue + "/"
            for (k, p) in paths where p.rawValue.hasPrefix(prefix) {
                paths[k] = ItemIdentifier(id.rawValue + "/" + p.rawValue.dropFirst(prefix.count))
            }
        }
        paths[key] = id
    }

    /// Forgets `key` and everything below its path. Lock held.
    private func forget(_ key: String, below old: ItemIdentifier) {
        paths[key] = nil
        guard !old.isRoot else { return }
        let prefix = old.rawValue + "/"
        for (k, p) in paths where p.rawValue.hasPrefix(prefix) { paths[k] = nil }
    }
}
