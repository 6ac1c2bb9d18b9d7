import Foundation

/// A change a listing found at the remote, as the kernel needs to hear it: a name gone
/// (`notify_delete`, which file managers see as inotify `IN_DELETE`), a name that appeared
/// (its negative dentry must go), or new content or attributes under the same name (the page
/// cache must not serve the old version, even at the same size).
public enum RemoteChange: Sendable, Equatable {
    /// `folder`: the name was a folder's (the kernel's echo of it is an `rmdir`).
    case removed(ItemIdentifier, folder: Bool = false)
    case added(ItemIdentifier)
    case modified(ItemIdentifier)

    public var identifier: ItemIdentifier {
        switch self {
        case .removed(let id, _), .added(let id), .modified(let id): return id
        }
    }

    /// What changed between two listings of one folder. Both are sorted by identifier
    /// (`FolderState`), so this is one merge pass. A name whose kind changed is removed and
    /// added (the kernel must not keep a file's inode for a folder).
    static func diff(old: [Item], new: [Item]) -> [RemoteChange] {
        var changes: [RemoteChange] = []
        var i = 0, j = 0
        while i < old.count || j < new.count {
            if j == new.count || (i < old.count && old[i].identifier.rawValue < new[j].identifier.rawValue) {
                changes.append(.removed(old[i].identifier, folder: old[i].kind == .folder)); i += 1
            } else if i == old.count || new[j].identifier.rawValue < old[i].identifier.rawValue {
                changes.append(.added(new[j].identifier)); j += 1
            } else {
                let (a, b) = (old[i], new[j])
                if a.kind != b.kind {
                    changes.append(.removed(a.identifier, folder: a.kind == .folder)); changes.append(.added(b.identifier))
                } else if differs(a, b) {
                    changes.append(.modified(b.identifier))
                }
                i += 1; j += 1
            }
        }
        return changes
    }

    /// Same name, different item: another version, size, time, mode or link target. Folders
    /// compare by mode only: a folder's size and time change with its children, which are
    /// reported themselves.
    static func differs(_ a: Item, _ b: Item) -> Bool {
        if a.permissions != b.permissions { return true }
        switch a.kind {
        case .folder: return false
        case .symlink: return a.symlinkTarget != b.symlinkTarget
        case .file:
            if let va = a.contentTag, let vb = b.contentTag { return va != vb || a.size != b.size }
            return a.size != b.size || a.modifiedTime != b.modifiedTime
        }
    }
}

