import Foundation
import GRDB

/// Pins: the items the user asked to keep on this machine. Only the pinned items themselves are
/// stored; what is below a pinned folder is covered by it.
extension PlaceholderStore {
    public func pins() throws -> [ItemIdentifier] {
        try read { db in try String.fetchAll(db, sql: "SELECT id FROM pin ORDER BY id").map(ItemIdentifier.init) }
    }

    /// Pins `id`; pins below it are folded into it.
    public func addPin(_ id: ItemIdentifier) throws {
        try write(placeholders: false) { db in
            let subtree = Subtree(id: id)
            try db.execute(sql: "DELETE FROM pin WHERE \(subtree.below("id"))", arguments: subtree.belowArguments)
            try db.execute(sql: "INSERT OR REPLACE INTO pin (id, since) VALUES (?, ?)", arguments: [id.rawValue, Date().timeIntervalSince1970])
        }
    }

    /// Unpins `id` and everything pinned below it.
    public func removePin(_ id: ItemIdentifier) throws {
        try write(placeholders: false) { db in
            let subtree = Subtree(id: id)
            try db.execute(sql: "DELETE FROM pin WHERE \(subtree.includes("id"))", arguments: subtree.includesArguments)
        }
    }

    /// Pins move with their items (`mv` of a pinned folder keeps it pinned).
    public func movePins(_ from: ItemIdentifier, to: ItemIdentifier) throws {
        try write(placeholders: false) { db in
            let subtree = Subtree(id: from)
            try db.execute(sql: "UPDATE OR REPLACE pin SET id = \(subtree.moved("id")) WHERE \(subtree.includes("id"))",
                           arguments: subtree.movedArguments(to: to) + subtree.includesArguments)
        }
    }
}
