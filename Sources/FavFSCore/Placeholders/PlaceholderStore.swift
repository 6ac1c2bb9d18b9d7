import Foundation
import GRDB
import Synchronization

/// The persistent side of the core, one SQLite database per remote under the cache dir:
/// placeholders (every item seen, with when each folder was last enumerated) and the content
/// cache's index (which byte ranges of which version are on disk). Placeholders survive unmount,
/// so a remount browses at once, even with the server down.
public final class PlaceholderStore: Sendable {
    let pool: DatabasePool
    public let path: String

    public init(path: String) throws {
        self.path = path
        var config = Configuration()
        config.busyMode = .timeout(10)
        // WAL with synchronous=NORMAL: a commit survives the process dying (crash, kill -9) but
        // is not fsynced; FULL fsynced on every download's range update, on the read path.
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        // SQLite said so while it was in use (see `noteIfCorrupt`): quick_check would not see an
        // index that disagrees with its table, the damage this marker is usually about.
        if let found = try? String(contentsOfFile: Self.damageMarker(path), encoding: .utf8) {
            throw DamagedDatabase(path: path, findings: ["SQLite reported it corrupt while in use: " + found])
        }
        pool = try DatabasePool(path: path, configuration: config)
        // A truncated or overwritten file can open and fail only later, query by query.
        let check = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        guard check == ["ok"] else { throw DamagedDatabase(path: path, findings: check) }
        try StoreSchema.migrator.migrate(pool)
    }

    /// The file beside the database that says SQLite found it corrupt while in use; the next
    /// open refuses the database (the mount then sets both aside and starts a new one).
    public static func damageMarker(_ path: String) -> String { path + ".corrupt" }

    /// Leaves the damage marker when `error` is SQLite's SQLITE_CORRUPT (any extended code).
    public func noteIfCorrupt(_ error: Error) {
        guard let e = error as? DatabaseError, e.resultCode.primaryResultCode == .SQLITE_CORRUPT else { return }
        noteCorruption("\(e)")
    }

    /// Leaves the damage marker, saying `what` SQLite reported (the first report is kept).
    public func noteCorruption(_ what: String) {
        let marker = Self.damageMarker(path)
        if FileManager.default.fileExists(atPath: marker) { return }
        _ = FileManager.default.createFile(atPath: marker, contents: Data("\(Date()): \(what)\n".utf8))
    }

    /// `pool.read`, noting corruption (`noteIfCorrupt`); on the held writer inside
    /// `holdingWriter` (it sees the transaction's own writes).
    /// `caller`: the store method, for `StoreWitness`.
    func read<T>(caller: String = #function, _ body: (Database) throws -> T) throws -> T {
        StoreWitness.storeCalled("PlaceholderStore.\(caller)", writes: false)
        do {
            if let held = heldWriter { return try body(held.db) }
            return try pool.read(body)
        } catch { noteIfCorrupt(error); throw error }
    }

    /// `pool.write`, noting corruption (`noteIfCorrupt`); on the held writer inside
    /// `holdingWriter`. `placeholders`: whether it may change placeholders (the `item` table),
    /// counted in `placeholderWrites`.
    func write<T>(caller: String = #function, placeholders: Bool = true, _ body: (Database) throws -> T) throws -> T {
        StoreWitness.storeCalled("PlaceholderStore.\(caller)", writes: true)
        if let held = heldWriter {
            do { return try held.write(placeholders: placeholders, body) } catch { noteIfCorrupt(error); throw error }
        }
        defer { if placeholders { countPlaceholderWrite() } }
        do { return try pool.write(body) } catch { noteIfCorrupt(error); throw error }
    }

    private let writeCount = Atomic<Int>(0)

    /// One more write transaction that may have changed placeholders ended.
    func countPlaceholderWrite() { writeCount.add(1, ordering: .sequentiallyConsistent) }

    /// How many write transactions that may change placeholders ended so far (committed or
    /// not): a reader of placeholders that saw the same count before and after its read knows
    /// none landed in between. Content records, the journal, pins and kept times are not
    /// counted: a folder read (`Placeholders.preload`) must not start again for each range a
    /// download records.
    public var placeholderWrites: Int { writeCount.load(ordering: .sequentiallyConsistent) }

    /// Whether `error` is SQLite saying the disk (or the database's size limit) is full.
    public static func isDiskFull(_ error: Error) -> Bool {
        (error as? DatabaseError)?.resultCode == .SQLITE_FULL
    }

    /// Checkpoints the write-ahead log into the database and closes it (unmount), so the cache
    /// dir holds one file, not three.
    public func close() {
        _ = try? pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        try? pool.close()
    }

    // MARK: placeholders

    private static func item(from row: Row) -> Item {
        Item(identifier: ItemIdentifier(row["id"]),
             kind: ItemKind(rawValue: row["kind"]) ?? .file,
             size: row["size"], modifiedTime: timestamp(row), version: row["version"],
             permissions: (row["permissions"] as Int?).map { UInt16(truncatingIfNeeded: $0) },
             symlinkTarget: row["symlinkTarget"])
    }

    /// The modification time of a row: whole seconds plus nanoseconds, or (rows written before
    /// v3) seconds as a REAL.
    private static func timestamp(_ row: Row) -> Timestamp? {
        guard let seconds = row["modified"] as Double? else { return nil }
        guard let nanos = row["modifiedNanos"] as Int64? else { return Timestamp(seconds) }
        return Timestamp(seconds: Int64(seconds), nanoseconds: Int32(truncatingIfNeeded: nanos))
    }

    /// One placeholder and, for a folder, when it was last enumerated.
    public func item(_ id: ItemIdentifier) throws -> (item: Item, listedAt: Double?)? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM item WHERE id = ?", arguments: [id.rawValue]) else { return nil }
            return (Self.item(from: row), row["listedAt"])
        }
    }

    /// A folder's children and when the folder was listed, read in one transaction: read
    /// apart, a listing committing in between would pair "listed just now" with no children.
    public func listing(of folder: ItemIdentifier) throws -> (items: [Item], listedAt: Double?) {
        try read { db in
            // A cursor, not fetchAll: 100,000 copied rows would be 13 MB on top of the items.
            var items: [Item] = []
            let rows = try Row.fetchCursor(db, sql: "SELECT * FROM item WHERE parent = ?", arguments: [folder.rawValue])
            while let row = try rows.next() { items.append(Self.item(from: row)) }
            let listedAt = try Double.fetchOne(db, sql: "SELECT listedAt FROM item WHERE id = ?", arguments: [folder.rawValue])
            return (items, listedAt)
        }
    }

    /// The children of a folder, with each child folder's own `listedAt`.
    public func children(of folder: ItemIdentifier) throws -> [(item: Item, listedAt: Double?)] {
        try read { db in
            var children: [(item: Item, listedAt: Double?)] = []
            let rows = try Row.fetchCursor(db, sql: "SELECT * FROM item WHERE parent = ?", arguments: [folder.rawValue])
            while let row = try rows.next() { children.append((Self.item(from: row), row["listedAt"])) }
            return children
        }
    }

    /// Records one item (keeping a folder's `listedAt` when it stays a folder).
    public func upsert(_ item: Item) throws {
        try write { db in try Self.upsert(item, db) }
    }

    private static func upsert(_ item: Item, _ db: Database) throws {
        // Cached: a listing upserts thousands of rows in one transaction.
        let statement = try db.cachedStatement(sql: """
            INSERT INTO item (id, parent, kind, size, modified, modifiedNanos, version, permissions, symlinkTarget, listedAt)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)
            ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, size = excluded.size, modified = excluded.modified,
                modifiedNanos = excluded.modifiedNanos,
                version = excluded.version, permissions = excluded.permissions, symlinkTarget = excluded.symlinkTarget,
                listedAt = CASE WHEN item.kind = excluded.kind THEN item.listedAt ELSE NULL END
            """)
        try statement.execute(arguments: [item.identifier.rawValue, item.parent?.rawValue, item.kind.rawValue, item.size,
                                          item.modifiedTime.map { Double($0.seconds) }, item.modifiedTime.map { Int64($0.nanoseconds) },
                                          item.version, item.permissions.map { Int($0) }, item.symlinkTarget])
    }

    /// Replaces a folder's children with a fresh enumeration in one transaction: items gone from
    /// the remote are removed with everything below them; the folder is marked listed at `listedAt`.
    /// A child with a journal row (written here, not uploaded yet) keeps its placeholder, listed
    /// or not: a listing fetched before a file was created or rewritten here must not undo it,
    /// even for a moment a crash could fall into.
    public func replaceChildren(of folder: Item, with items: [Item], listedAt: Double) throws {
        try write { db in
            // A file written here and not uploaded yet has the folder's name (another client
            // made a folder there; a listing of it was under way): the file stays, and so does
            // its placeholder. Overwritten with the folder's, the next mount showed the folder
            // and hid the only copy of the file (a 1000-step reference-model run, seed 22).
            if try Bool.fetchOne(db, sql: "SELECT EXISTS(SELECT 1 FROM journal WHERE id = ?)",
                                 arguments: [folder.identifier.rawValue]) == true { return }
            let below = Subtree(id: folder.identifier)
            let dirty = Set(try String.fetchAll(db, sql: "SELECT id FROM journal WHERE \(below.below("id"))",
                                                arguments: below.belowArguments))
            let keep = Set(items.map(\.identifier.rawValue))
            var gone: [String] = []
            let old = try String.fetchCursor(db, sql: "SELECT id FROM item WHERE parent = ?", arguments: [folder.identifier.rawValue])
            while let id = try old.next() { if !keep.contains(id) && !dirty.contains(id) { gone.append(id) } }
            // Their kept times stay: a listing that saw the server's move before the rename
            // here was recorded (a change feed echoing it) must leave the rename its time to
            // take along. Those left without a placeholder go at the next open (`keptTimes`).
            for id in gone { try Self.removeSubtree(ItemIdentifier(id), db, keepingTimes: true) }
            for item in items where !dirty.contains(item.identifier.rawValue) { try Self.upsert(item, db) }
            try Self.upsert(folder, db)
            try db.execute(sql: "UPDATE item SET listedAt = ? WHERE id = ?", arguments: [listedAt, folder.identifier.rawValue])
        }
    }

    /// Removes an item and every placeholder below it.
    public func removeSubtree(_ id: ItemIdentifier) throws {
        try write { db in try Self.removeSubtree(id, db) }
    }

    private static func removeSubtree(_ id: ItemIdentifier, _ db: Database, keepingTimes: Bool = false) throws {
        let subtree = Subtree(id: id)
        for table in keepingTimes ? ["item"] : ["item", "keptTime"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE \(subtree.includes("id"))", arguments: subtree.includesArguments)
        }
    }

    // MARK: content index

    private static func record(from row: Row) -> ContentRecord {
        ContentRecord(id: ItemIdentifier(row["id"]), file: row["file"], version: row["version"], size: row["size"],
                      ranges: ByteRangeSet(persisted: row["ranges"]) ?? ByteRangeSet(),
                      lastUsed: row["lastUsed"], pinned: (row["pinned"] as Int) != 0)
    }

    public func contentRecord(_ id: ItemIdentifier) throws -> ContentRecord? {
        try read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM content WHERE id = ?"), arguments: [id.rawValue]).map(Self.record)
        }
    }

    /// Saves a content record, and `item`'s placeholder in the same transaction when given.
    public func saveContent(_ r: ContentRecord, with item: Item? = nil) throws {
        try write(placeholders: item != nil) { db in
            if let item { try Self.upsert(item, db) }
            try Self.upsertContent(r, db)
        }
    }

    private static func upsertContent(_ r: ContentRecord, _ db: Database) throws {
        // Cached statements here and below: these run several times per file written.
        try db.cachedStatement(sql: """
            INSERT INTO content (id, file, version, size, ranges, bytes, lastUsed, pinned) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET file = excluded.file, version = excluded.version, size = excluded.size,
                ranges = excluded.ranges, bytes = excluded.bytes, lastUsed = excluded.lastUsed, pinned = excluded.pinned
            """).execute(arguments: [r.id.rawValue, r.file, r.version, r.size, r.ranges.description, r.ranges.count,
                                     r.lastUsed, r.pinned ? 1 : 0])
    }

    public func deleteContent(_ id: ItemIdentifier) throws {
        try write(placeholders: false) { db in try db.execute(sql: "DELETE FROM content WHERE id = ?", arguments: [id.rawValue]) }
    }

    /// Deletes the content record of `id` only if it names the cache file `file`.
    public func deleteContent(_ id: ItemIdentifier, file: String) throws {
        try write(placeholders: false) { db in try db.execute(sql: "DELETE FROM content WHERE id = ? AND file = ?", arguments: [id.rawValue, file]) }
    }

    /// The content records of `id` and of everything below it.
    public func contentRecords(atOrBelow id: ItemIdentifier) throws -> [ContentRecord] {
        let subtree = Subtree(id: id)
        return try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM content WHERE \(subtree.includes("id")) ORDER BY id",
                             arguments: subtree.includesArguments).map(Self.record)
        }
    }

    /// Every content record, least recently used first (the eviction order).
    public func contentByLastUse() throws -> [ContentRecord] {
        try read { db in try Row.fetchAll(db, sql: "SELECT * FROM content ORDER BY lastUsed ASC").map(Self.record) }
    }

    /// Bytes of content on disk, summed over all items.
    public func contentBytes() throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(bytes), 0) FROM content") ?? 0 }
    }

    /// Whether any content record names the cache file `file`.
    public func namesContentFile(_ file: String) throws -> Bool {
        try read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS(SELECT 1 FROM content WHERE file = ?)", arguments: [file]) ?? false }
    }

    /// The largest numeric content file name in use, so new files never reuse a name.
    public func maxContentFileNumber() throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(CAST(file AS INTEGER)), 0) FROM content") ?? 0 }
    }

    // MARK: journal (write-back)

    private static func journal(from row: Row) -> JournalEntry {
        var j = JournalEntry(id: ItemIdentifier(row["id"]), baseVersion: row["baseVersion"], isNew: (row["isNew"] as Int) != 0,
                             since: row["since"], attempts: row["attempts"], lastError: row["lastError"], refused: row["refused"])
        j.lostReplies = SentContent.list(row["lostReplies"])
        return j
    }

    /// Records what attempts of `id` whose answer was lost sent (its journal row's; none if
    /// it has no row).
    public func saveLostReplies(_ id: ItemIdentifier, _ replies: [SentContent]) throws {
        try write(placeholders: false) { db in
            try db.execute(sql: "UPDATE journal SET lostReplies = ? WHERE id = ?", arguments: [SentContent.text(replies), id.rawValue])
        }
    }

    /// Makes every transaction committed so far survive a power cut, not only the process dying
    /// (a checkpoint syncs the write-ahead log first): what fsync promises for a journal row.
    /// Syncing only the log file would do too, and is not faster: without checkpoints the log
    /// grows, and each `fdatasync` of a growing file also commits its new size (sqlite in a
    /// mount took longer that way than with a checkpoint per new journal file).
    public func makeDurable() throws {
        StoreWitness.storeCalled("PlaceholderStore.makeDurable", writes: true)
        try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
    }

    /// Saves a journal row, with `item`'s placeholder and the content record when given, in one transaction.
    public func saveJournal(_ j: JournalEntry, with item: Item? = nil, content: ContentRecord? = nil) throws {
        try write(placeholders: item != nil) { db in
            if let item { try Self.upsert(item, db) }
            if let content { try Self.upsertContent(content, db) }
            try db.cachedStatement(sql: """
                INSERT INTO journal (id, baseVersion, isNew, since, attempts, lastError, refused) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET baseVersion = excluded.baseVersion, isNew = excluded.isNew, since = excluded.since,
                    attempts = excluded.attempts, lastError = excluded.lastError, refused = excluded.refused
                """).execute(arguments: [j.id.rawValue, j.baseVersion, j.isNew ? 1 : 0, j.since, j.attempts, j.lastError, j.refused])
        }
    }

    public func journalEntries() throws -> [JournalEntry] {
        try read { db in try Row.fetchAll(db, sql: "SELECT * FROM journal ORDER BY since").map(Self.journal) }
    }

    /// Whether `id` has a journal row (is dirty).
    public func hasJournal(_ id: ItemIdentifier) throws -> Bool {
        try read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM journal WHERE id = ?", arguments: [id.rawValue]) ?? false }
    }

    public func deleteJournal(_ id: ItemIdentifier) throws {
        try write(placeholders: false) { db in try db.execute(sql: "DELETE FROM journal WHERE id = ?", arguments: [id.rawValue]) }
    }

    /// Records a confirmed upload in one transaction: the placeholder takes the remote's new
    /// metadata, the cached content is recorded under the new version, and the journal row goes.
    /// `journalSince` names the journal row the upload answered: a newer row (a change made
    /// after the upload was confirmed) stays.
    public func commitUpload(_ item: Item, contentVersion: String, journalSince: Double) throws {
        try write { db in
            try Self.upsert(item, db)
            try db.cachedStatement(sql: "UPDATE content SET version = ? WHERE id = ?").execute(arguments: [contentVersion, item.identifier.rawValue])
            try db.cachedStatement(sql: "DELETE FROM journal WHERE id = ? AND since = ?").execute(arguments: [item.identifier.rawValue, journalSince])
        }
    }

    /// A local edit saved as a conflict copy becomes the copy's, in one transaction: the copy's
    /// placeholder, the cached content (now recorded under the copy's version) and, when the
    /// edit changed while the copy was sent (`stillDirty`), the journal row, now based on the
    /// copy's version; otherwise the row (the one `journalSince` names) goes. The name takes the
    /// remote's item (`name`) when it is known, and its placeholder goes when the remote has
    /// nothing there (`nameGone`).
    public func moveEditToConflictCopy(_ id: ItemIdentifier, copy: Item, contentVersion: String, name: Item?,
                                       nameGone: Bool = false, journalSince: Double, stillDirty: Bool) throws {
        let to = copy.identifier.rawValue
        try write { db in
            try Self.upsert(copy, db)
            if let name { try Self.upsert(name, db) }
            try db.execute(sql: "DELETE FROM content WHERE id = ?", arguments: [to])
            try db.execute(sql: "UPDATE content SET id = ?, version = ? WHERE id = ?", arguments: [to, contentVersion, id.rawValue])
            if stillDirty {
                try db.execute(sql: "DELETE FROM journal WHERE id = ?", arguments: [to])
                try db.execute(sql: """
                    UPDATE journal SET id = ?, baseVersion = ?, isNew = 0, attempts = 0, lastError = NULL, refused = NULL, lostReplies = NULL
                    WHERE id = ? AND since = ?
                    """, arguments: [to, copy.version, id.rawValue, journalSince])
            } else {
                try db.execute(sql: "DELETE FROM journal WHERE id = ? AND since = ?", arguments: [id.rawValue, journalSince])
            }
            // The remote has nothing at the name: its placeholder goes in the same step.
            if nameGone { try Self.removeSubtree(id, db) }
        }
    }

    /// Moves an item and everything below it to `destination` in placeholders, content index
    /// and journal, replacing whatever was at the destination.
    public func move(_ source: ItemIdentifier, to destination: ItemIdentifier) throws {
        try write { db in
            try Self.removeSubtree(destination, db)
            try db.execute(sql: "DELETE FROM content WHERE id = ?", arguments: [destination.rawValue])
            try db.execute(sql: "DELETE FROM journal WHERE id = ?", arguments: [destination.rawValue])
            // Ids (and parents) at and below the source.
            let subtree = Subtree(id: source)
            for (table, column) in [("item", "id"), ("content", "id"), ("journal", "id"), ("keptTime", "id"), ("item", "parent")] {
                try db.execute(sql: "UPDATE \(table) SET \(column) = \(subtree.moved(column)) WHERE \(subtree.includes(column))",
                               arguments: subtree.movedArguments(to: destination) + subtree.includesArguments)
            }
            try db.execute(sql: "UPDATE item SET parent = ? WHERE id = ?",
                           arguments: [destination.parent?.rawValue, destination.rawValue])
        }
    }
}
