import GRDB

/// The store's tables and how a cache dir made by an older favfs is brought up to date: one
/// migration per change, applied in order when the store opens (`PlaceholderStore.init`).
enum StoreSchema {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE item (
                    id TEXT PRIMARY KEY NOT NULL,
                    parent TEXT,
                    kind TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    modified REAL,
                    version TEXT,
                    permissions INTEGER,
                    symlinkTarget TEXT,
                    listedAt REAL
                );
                CREATE INDEX item_parent ON item(parent);
                CREATE TABLE content (
                    id TEXT PRIMARY KEY NOT NULL,
                    file TEXT NOT NULL UNIQUE,
                    version TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    ranges TEXT NOT NULL,
                    bytes INTEGER NOT NULL,
                    lastUsed REAL NOT NULL,
                    pinned INTEGER NOT NULL DEFAULT 0
                );
                """)
        }
        m.registerMigration("v2-journal") { db in
            // One row per dirty item: written here, not yet confirmed by the remote. A row is
            // removed only after the remote confirmed the upload, so a crash loses nothing.
            try db.execute(sql: """
                CREATE TABLE journal (
                    id TEXT PRIMARY KEY NOT NULL,
                    baseVersion TEXT,
                    isNew INTEGER NOT NULL,
                    since REAL NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    lastError TEXT
                );
                """)
        }
        m.registerMigration("v3-nanoseconds") { db in
            // modified keeps whole seconds from now on, modifiedNanos the rest: a REAL holds a
            // 2020 time to about 240 ns, and utimensat's nanoseconds must read back as set.
            try db.execute(sql: "ALTER TABLE item ADD COLUMN modifiedNanos INTEGER")
        }
        m.registerMigration("v4-pins") { db in
            // Items pinned by the user (a folder's pin covers everything below it).
            try db.execute(sql: "CREATE TABLE pin (id TEXT PRIMARY KEY NOT NULL, since REAL NOT NULL)")
        }
        m.registerMigration("v5-refused") { db in
            // The kind of a permanent refusal (too large, denied...): the upload is not tried
            // again until the item changes, also after a remount.
            try db.execute(sql: "ALTER TABLE journal ADD COLUMN refused TEXT")
        }
        m.registerMigration("v6-kept-times") { db in
            // Modification times set here on a remote that keeps none, with the remote version
            // each was set on (PlaceholderStore+KeptTimes.swift).
            try db.execute(sql: """
                CREATE TABLE keptTime (
                    id TEXT PRIMARY KEY NOT NULL,
                    version TEXT NOT NULL,
                    seconds INTEGER NOT NULL,
                    nanoseconds INTEGER NOT NULL
                );
                """)
        }
        m.registerMigration("v7-lost-replies") { db in
            // What upload attempts whose answer was lost sent (`JournalEntry.lostReplies`), so
            // that after a crash the server's copy of such an attempt is still known as ours.
            try db.execute(sql: "ALTER TABLE journal ADD COLUMN lostReplies TEXT")
        }
        return m
    }
}
