import GRDB

/// Modification times set here on a remote that keeps none (S3, nginx, FTP without `MFMT`),
/// with the remote version each was set on: kept in the cache dir, so after a remount a listing
/// still shows them while the files stay those versions, and `rsync -a` finds its times again.
/// They move with `move` and go with `removeSubtree`.
extension PlaceholderStore {
    /// The kept times, read once at mount. Those whose placeholder is gone are dropped first
    /// (a listing that no longer saw the name left them for a rename to take along).
    public func keptTimes() throws -> [KeptTime] {
        try write(placeholders: false) { db in
            try db.execute(sql: "DELETE FROM keptTime WHERE id NOT IN (SELECT id FROM item)")
            return try Row.fetchAll(db, sql: "SELECT id, version, seconds, nanoseconds FROM keptTime").map { row in
                KeptTime(id: ItemIdentifier(row["id"]), version: row["version"],
                         time: Timestamp(seconds: row["seconds"], nanoseconds: Int32(clamping: row["nanoseconds"] as Int64)))
            }
        }
    }

    public func keepTime(_ kept: KeptTime) throws {
        try write(placeholders: false) { db in
            try db.execute(sql: "INSERT OR REPLACE INTO keptTime (id, version, seconds, nanoseconds) VALUES (?, ?, ?, ?)",
                           arguments: [kept.id.rawValue, kept.version, kept.time.seconds, Int64(kept.time.nanoseconds)])
        }
    }
}
