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
        try write { db in
            try db.execute(sql: "DELETE FROM pin WHERE substr(id, 1, ?) = ?", arguments: [Self.below(id).utf8.count, Self.below(id)])
            try db.execute(sql: "INSERT OR REPLACE INTO pin (id, since) VALUES (?, ?)", arguments: [id.rawValue, Date().timeIntervalSince1970])
        }
    }

    /// Unpins `id` and everything pinned below it.
    public func removePin(_ id: ItemIdentifier) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM pin WHERE id = ? OR substr(id, 1, ?) = ?",
                           arguments: [id.rawValue, Self.below(id).utf8.count, Self.below(id)])
        }
    }

    /// The prefix of every identifier below `id`.
    static func below(_ id: ItemIdentifier) -> String { id.isRoot ? "/" : id.rawValue + "/" }

    /// Pins move with their items (`mv` of a pinned folder keeps it pinned).
    public func movePins(_ from: ItemIdentifier, to: ItemIdentifier) throws {
        try write { db in
            let n = from.rawValue.utf8.count
            try db.execute(sql: "UPDATE OR REPLACE pin SET id = ? || substr(id, ? + 1) WHERE id = ? OR substr(id, 1, ?) = ?",
                           arguments: [to.rawValue, n, from.rawValue, n + 1, from.rawValue + "/"])
        }
    }
}
