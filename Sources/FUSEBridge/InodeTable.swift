import Foundation
import FavFSCore

/// Inode numbers for items the kernel knows, with the kernel's lookup count per inode: every
/// reply that hands out an entry (lookup, readdirplus) adds one; `forget` takes them back, and
/// an inode whose count reaches zero is dropped. The root is inode 1 and never forgotten.
final class InodeTable: @unchecked Sendable {
    private let lock = NSLock()
    /// What the table keeps per inode. The size told is here, not in a dictionary of its own:
    /// a folder of a million entries held one more dictionary of 50 MB for it.
    private struct Inode {
        var id: ItemIdentifier
        var lookups: UInt64
        /// The size last given to the kernel with the inode's attributes (`noteTold`); `untold`: none.
        var toldSize: Int64 = Inode.untold
        static let untold = Int64.min
    }
    private var byInode: [UInt64: Inode] = [1: Inode(id: .rootContainer, lookups: 1)]
    private var byIdentifier: [ItemIdentifier: UInt64] = [.rootContainer: 1]
    private var next: UInt64 = 2
    /// The content version each inode was last refreshed to by a reader (`noteRefreshed`).
    private var refreshedVersions: [UInt64: String] = [:]

    static let root: UInt64 = 1

    /// The names inodes get once their item was deleted or replaced (never a listed name: a
    /// path-addressed identifier has no second slash at the start).
    static let orphanPrefix = "//favfs-orphan-"

    static func isOrphan(_ id: ItemIdentifier) -> Bool { id.rawValue.hasPrefix(orphanPrefix) }

    func identifier(_ ino: UInt64) -> ItemIdentifier? { lock.withLock { byInode[ino]?.id } }

    /// The inode of `id`, counting one more kernel reference to it.
    func remember(_ id: ItemIdentifier) -> UInt64 {
        lock.withLock {
            if let ino = byIdentifier[id] {
                if ino != Self.root { byInode[ino]!.lookups += 1 }
                return ino
            }
            let ino = next
            next += 1
            byInode[ino] = Inode(id: id, lookups: 1)
            byIdentifier[id] = ino
            return ino
        }
    }

    /// Records the size the kernel was given with the attributes of `ino` (an entry or an attr
    /// reply): the kernel reads no further than it, and copies up to it whatever a short read
    /// left, so an open of content of another size must make it ask again.
    func noteTold(_ ino: UInt64, size: Int64) {
        lock.withLock { byInode[ino]?.toldSize = size }
    }

    /// Records that the kernel was told to ask again for the attributes of `ino`, now of content
    /// version `version` (a reader moved to it: `Bridge.reply`).
    func noteRefreshed(_ ino: UInt64, version: String) {
        lock.withLock { if byInode[ino] != nil { refreshedVersions[ino] = version } }
    }

    /// Whether the kernel was already told of `ino`'s change to `version` (`noteRefreshed`).
    func wasRefreshed(_ ino: UInt64, to version: String) -> Bool { lock.withLock { refreshedVersions[ino] == version } }

    /// The size last given with the attributes of `ino`; nil when none was recorded.
    func toldSize(_ ino: UInt64) -> Int64? {
        lock.withLock { byInode[ino].flatMap { $0.toldSize == Inode.untold ? nil : $0.toldSize } }
    }

    /// The inode of `id` if the kernel holds one, without counting (plain readdir's d_ino).
    func existing(_ id: ItemIdentifier) -> UInt64? { lock.withLock { byIdentifier[id] } }

    func forget(_ ino: UInt64, _ n: UInt64) {
        guard ino != Self.root else { return }
        lock.withLock {
            guard let entry = byInode[ino] else { return }
            if entry.lookups <= n {
                byInode[ino] = nil
                refreshedVersions[ino] = nil
                if byIdentifier[entry.id] == ino { byIdentifier[entry.id] = nil }
            } else {
                byInode[ino]!.lookups = entry.lookups - n
            }
        }
    }

    /// After a rename: inodes at and below `from` now name the items at and below `to`; an
    /// inode that named `to` before no longer has a name. Returns the name that inode has now.
    @discardableResult
    func move(_ from: ItemIdentifier, to: ItemIdentifier) -> ItemIdentifier? {
        lock.withLock {
            var replaced: ItemIdentifier?
            if let old = byIdentifier.removeValue(forKey: to) {
                replaced = ItemIdentifier(Self.orphanPrefix + "replaced-\(old)")
                byInode[old]?.id = replaced!
            }
            let prefix = from.rawValue + "/"
            for (id, ino) in byIdentifier where id == from || id.rawValue.hasPrefix(prefix) {
                let newId = ItemIdentifier(to.rawValue + id.rawValue.dropFirst(from.rawValue.count))
                byIdentifier[id] = nil
                byIdentifier[newId] = ino
                byInode[ino]?.id = newId
            }
            return replaced
        }
    }

    /// After a delete: the name no longer leads to the inode (a new item of that name gets a
    /// new inode); the kernel may still hold the old one until it forgets it.
    /// Returns the name the inode has now, if the kernel held one.
    @discardableResult
    func detach(_ id: ItemIdentifier) -> ItemIdentifier? {
        lock.withLock {
            guard let ino = byIdentifier.removeValue(forKey: id) else { return nil }
            let orphan = ItemIdentifier(Self.orphanPrefix + "deleted-\(ino)")
            byInode[ino]?.id = orphan
            return orphan
        }
    }
}
