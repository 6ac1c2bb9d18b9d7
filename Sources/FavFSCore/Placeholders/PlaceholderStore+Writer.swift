import Foundation
import GRDB

/// SQLite's single writer, taken before a lock instead of under it.
///
/// A store write waits for the writer, which a listing of 100,000 entries being saved holds for
/// about a second; a thread that waited for it while holding a lock a FUSE callback takes would
/// stall every callback behind that save. Some changes must still land in the store and in memory
/// in one step (a rename's rows and its open entries; an edit handed to its conflict copy). They
/// take the writer first, with no such lock held, begin their transaction, then take their locks:
/// their writes under the locks run at once, on the held writer, and wait for no one.
extension PlaceholderStore {
    /// Runs `body` with SQLite's writer held by this thread and a write transaction begun
    /// (`BEGIN IMMEDIATE`), both before `body` takes any lock. The store calls `body` makes on
    /// this thread run on the held writer: each write in a savepoint (whole or not at all),
    /// never waiting for another writer. `body` may end the transaction early with
    /// `WriterTransaction.commit()` — under its own lock, so that other threads see the store and
    /// memory change in one step; otherwise it commits when `body` returns, and rolls back
    /// when `body` throws. A call nested in another on the same thread shares its transaction.
    func holdingWriter<T>(caller: String = #function, _ body: (WriterTransaction) throws -> T) throws -> T {
        if let held = WriterTransaction.current, held.store === self { return try body(held) }
        StoreWitness.writerTaken(caller)
        do {
            return try pool.writeWithoutTransaction { db in
                let held = WriterTransaction(store: self, db: db)
                try db.beginTransaction(.immediate)
                WriterTransaction.current = held
                StoreWitness.writerHeld(true)
                defer {
                    StoreWitness.writerHeld(false)
                    WriterTransaction.current = nil
                    if db.isInsideTransaction { try? db.rollback() }
                    if !held.ended && held.placeholders { countPlaceholderWrite() }
                }
                let result = try body(held)
                try held.end()
                return result
            }
        } catch {
            noteIfCorrupt(error)
            throw error
        }
    }

    /// The held writer's connection when this thread holds it (inside `holdingWriter`).
    var heldWriter: WriterTransaction? {
        guard let held = WriterTransaction.current, held.store === self else { return nil }
        return held
    }
}

/// The writer a thread holds inside `PlaceholderStore.holdingWriter`, with its transaction.
final class WriterTransaction {
    let store: PlaceholderStore
    let db: Database
    /// Whether the transaction was committed (`commit`).
    private(set) var ended = false
    /// Whether a write in the transaction may have changed placeholders.
    private(set) var placeholders = false

    init(store: PlaceholderStore, db: Database) {
        self.store = store
        self.db = db
    }

    /// Commits what was written so far, under the caller's lock; later writes on the held
    /// writer commit one by one. No automatic checkpoint runs in this commit (its fsyncs would
    /// hold the caller's lock); the next commit checkpoints as usual.
    func commit() throws {
        guard !ended else { return }
        let autocheckpoint = try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 1000
        try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
        defer { try? db.execute(sql: "PRAGMA wal_autocheckpoint = \(autocheckpoint)") }
        try end()
    }

    /// `commit` for a caller that holds none of its locks now (it takes them after, the writer
    /// still held): the automatic checkpoint may run in it, as in any commit.
    func commitHoldingNoLock() throws { try end() }

    /// Commits the transaction (`holdingWriter`'s end, with no lock of the caller held).
    fileprivate func end() throws {
        guard !ended else { return }
        try db.commit()
        ended = true
        if placeholders { store.countPlaceholderWrite() }
    }

    /// Runs a store write on the held writer: in a savepoint while the transaction is open,
    /// in a transaction of its own after `commit`.
    /// `placeholders`: whether it may change placeholders (`placeholderWrites`).
    func write<T>(placeholders: Bool, _ body: (Database) throws -> T) throws -> T {
        var result: T?
        if ended {
            defer { if placeholders { store.countPlaceholderWrite() } }
            try db.inTransaction { result = try body(db); return .commit }
        } else {
            self.placeholders = self.placeholders || placeholders
            try db.inSavepoint { result = try body(db); return .commit }
        }
        return result!
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// This thread's held writer (set only inside `holdingWriter`, which clears it).
    fileprivate static var current: WriterTransaction? {
        get { pthread_getspecific(key).map { Unmanaged<WriterTransaction>.fromOpaque($0).takeUnretainedValue() } }
        set { pthread_setspecific(key, newValue.map { Unmanaged.passUnretained($0).toOpaque() }) }
    }
}
