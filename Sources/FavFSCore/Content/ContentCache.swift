import CLinux
import Foundation
import Synchronization
import Logging

/// Content of items on local disk: one sparse file per materialized item under `directory`, its
/// present ranges persisted in the store. startProviding fills it (`Downloads`, sharing
/// downloads between readers); stopProviding evicts, least recently used first, never an open
/// file, a pinned item or one with a download in flight.
public final class ContentCache: Sendable {
    public let directory: URL
    let store: PlaceholderStore
    /// Bytes of content kept at most (the mount's `--cache-size`).
    public let limit: Int64
    /// Downloads are whole chunks: a 4 KiB read costs one chunk, not the file.
    public let chunkSize: Int64
    /// Longer missing runs are split into requests of at most this many bytes, fetched in parallel.
    public let maxRequestSize: Int64
    let log = Logger(label: "favfs.content")
    /// Downloads (here) and uploads (the domain's) running now, for `favfs status`.
    public let transfers = TransferRegistry()
    /// Where content favfs could not deliver is kept: `CACHEDIR/lost+found`.
    public let lostAndFound: LostAndFound

    /// The entries in use (`EntryTable`), reachable only under `ContentCache.lock`. Taken by
    /// opens and closes: no store write runs under it but on SQLite's writer taken before it
    /// (a rename's `move`), so none waits for the writer (checked by `StoreWitness`; reads are fine).
    let table: Guarded<EntryTable>

    public init(directory: URL, store: PlaceholderStore, limit: Int64,
                chunkSize: Int64 = 128 << 10, maxRequestSize: Int64 = 2 << 20) throws {
        self.directory = directory
        self.directoryPath = directory.path
        lostAndFound = LostAndFound(directory: directory.deletingLastPathComponent().appendingPathComponent("lost+found"))
        self.store = store
        self.limit = limit
        self.chunkSize = chunkSize
        self.maxRequestSize = maxRequestSize
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        table = Guarded("ContentCache.lock", readsAllowed: true, EntryTable(nextFile: try store.maxContentFileNumber() + 1))
    }

    /// A cache file's path (plain string concatenation: building a URL for every file opened
    /// was 2.5% of favfs's CPU copying small files).
    func path(_ file: String) -> String { directoryPath + "/" + file }
    let directoryPath: String

    func localError(_ what: String, _ id: ItemIdentifier, _ err: Int32 = errno) -> ProviderError {
        Self.localError(what, id, file: directory.path, err)
    }

    /// A failed call on the cache disk, for `id`, at `file` (a cache file or the cache folder).
    static func localError(_ what: String, _ id: ItemIdentifier, file: String, _ err: Int32 = errno) -> ProviderError {
        // Past what the cache disk's file system holds (ext4: 16 TiB): the file is too large.
        ProviderError(err == ENOSPC ? .noSpace : err == EFBIG ? .tooLarge : .localIO,
                      path: id.rawValue,
                      detail: "\(what) in cache \(file): \(String(cString: strerror(err)))")
    }

    /// Opens (creating if needed) the content entry of `item` at `version`. Content cached for an
    /// older version is discarded — unless `local` (the item is dirty: the cache file holds the
    /// only copy of its content, whatever version it is recorded under), or the record has a
    /// journal row (changes made here the caller did not know of: they are the content then,
    /// under their own version). Balance with `release`.
    ///
    /// `recordLater`: a new entry is not recorded here; the caller records it in its own
    /// transaction and then calls `recorded(_:)` (until then the file goes with a release).
    func retain(item: Item, version: String, asHandle: Bool, local: Bool = false, recordLater: Bool = false) throws -> ContentEntry {
        let (e, save) = try table.withLock { t in try retainLocked(&t, item: item, version: version, asHandle: asHandle, local: local, recordLater: recordLater) }
        // Recorded after the cache's lock is released: an open or close of any other file must
        // not wait behind this one for SQLite's writer. Record writes of one entry land in
        // order whoever makes them (`saveRecord` takes its snapshot under `saveLock`).
        if save { recordRetained(e, item.identifier) }
        return e
    }

    /// Records an entry `retainLocked` made, after the cache's lock is released.
    private func recordRetained(_ e: ContentEntry, _ id: ItemIdentifier) {
        do { try e.saveRecord(to: store) } catch { log.warning("cannot record cache entry for \(id): \(error)") }
    }

    /// `retain` for background work that must not touch content in use: nil when the item has
    /// an entry already (open, or being fetched) or changes made here, else a new entry held
    /// as by `retain`.
    func retainIfUnused(item: Item, version: String) -> ContentEntry? {
        let retained = try? table.withLock { t -> (ContentEntry, save: Bool)? in
            // Nor content changed here (a journal row: a file renamed onto the name since the
            // caller looked), checked under this lock, which a rename's record move takes.
            guard t.entries[item.identifier] == nil, (try? store.hasJournal(item.identifier)) == false else { return nil }
            return try retainLocked(&t, item: item, version: version, asHandle: false, local: false, recordLater: false)
        }
        guard let (e, save) = retained ?? nil else { return nil }
        if save { recordRetained(e, item.identifier) }
        return e
    }

    /// `retain`'s part under the cache's lock: the entry, and whether its record is to be saved.
    /// Reads the store (a WAL read never waits for the writer); writes nothing.
    private func retainLocked(_ t: inout EntryTable, item: Item, version: String, asHandle: Bool, local: Bool, recordLater: Bool) throws -> (ContentEntry, save: Bool) {
        if let e = t.entries[item.identifier] {
            let replaced = e.withLock { es -> Bool in
                if (es.version == version || local) && !es.stale { return false }
                return true
            }
            if !replaced {
                e.withLock { es in es.users += 1; if asHandle { es.openHandles += 1 }; es.lastUsed = Date().timeIntervalSince1970 }
                return (e, false)
            }
            // A new version while the old one is still in use: the old entry lives on for its
            // users (stale), the new content gets a new file.
            e.withLock { es in es.stale = true }
            t.entries[item.identifier] = nil
            t.superseded.append(e)
        }
        // A record being deleted (evicted, removed) counts as gone: its file is going.
        let record = t.recordsGoing.contains(item.identifier) ? nil : try? store.contentRecord(item.identifier)
        let file: String
        var ranges = ByteRangeSet()
        var pinned = false
        var local = local, version = version
        // Another version's record that has a journal row holds the only copy of changes made
        // here (a file renamed onto this name since the caller read its item): it is this
        // name's content now, whole, under its own version; never emptied for another.
        if let record, !local, record.version != version, (try? store.hasJournal(item.identifier)) != false {
            local = true
            version = record.version
        }
        if let record {
            file = record.file
            pinned = record.pinned
            if local || (record.version == version && record.size == item.size) { ranges = record.ranges }
        } else {
            file = String(t.nextFile); t.nextFile += 1
        }
        let fd = open(path(file), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw localError("cannot open cache file", item.identifier) }
        var size = item.size
        if local {
            // Dirty content is whole and is the truth: its size is the file's, whatever the
            // placeholder or the record last said (a crash may have come between).
            var st = stat()
            guard fstat(fd, &st) == 0 else { let err = localError("cannot stat cache file", item.identifier); close(fd); throw err }
            size = Int64(st.st_size)
            ranges = ByteRangeSet([0..<size])
        } else if (ranges.isEmpty && ftruncate(fd, 0) != 0) || ftruncate(fd, off_t(item.size)) != 0 {
            // Nothing usable (new, or another version): emptied, then sized sparse.
            let err = localError("cannot size cache file", item.identifier); close(fd); throw err
        } else {
            // Bytes dropped from the file whose record still names them read as zeros: they
            // are downloaded again instead.
            ranges = CacheFileHoles.present(ranges, in: fd, size: item.size, margin: chunkSize)
        }
        let e = ContentEntry(id: item.identifier, file: file, path: path(file), fd: fd, version: version, size: size,
                             ranges: ranges, lastUsed: Date().timeIntervalSince1970, pinned: pinned)
        e.withLock { es in
            es.users = 1
            if asHandle { es.openHandles = 1 }
        }
        t.entries[item.identifier] = e
        if record == nil && (recordLater || !local) {
            // recordLater: the caller records it. Else a new, empty entry: nothing to record
            // until bytes arrive (the download records it). No database write on open: a large
            // listing being saved holds the write lock for up to a second, and a first read
            // must not wait behind it.
            e.withLock { es in es.recorded = false }
            return (e, false)
        }
        return (e, true)
    }

    /// Keeps an entry's file open for background work; balance with `release(_, asHandle: false)`.
    func hold(_ e: ContentEntry) { e.withLock { es in es.users += 1 } }

    /// Holds `e` (as `hold`) if it is still the entry of its item and in use, so its file is
    /// open; false when it was let go or replaced meanwhile. Under the cache's lock, which the
    /// last `release` takes to close the file.
    func holdIfInUse(_ e: ContentEntry) -> Bool {
        table.withLock { t in
            let id = e.withLock { es in es.id }
            guard t.entries[id] === e else { return false }
            return e.withLock { es in
                guard es.users > 0, !es.stale, !es.deleted else { return false }
                es.users += 1
                return true
            }
        }
    }

    /// Gives back what `retain` took; the file closes when nothing uses it.
    func release(_ e: ContentEntry, asHandle: Bool) {
        // The store must hold what is on disk before the entry goes (the next open and the
        // state attribute read it from there). The last user saves it first, without the
        // cache's lock, and lets go only if nothing came meanwhile; at most twice, so a store
        // that cannot be written keeps no close waiting (the ranges are then lost, not the bytes).
        var saves = 0
        while true {
            if saves < 2, e.withLock({ es in es.users == 1 && es.recordBehind }) {
                saves += 1
                do { try e.saveRecord(to: store) } catch { log.warning("cannot record cached ranges of \(e.id): \(error)"); saves = 2 }
            }
            let last: Bool? = table.withLock { t in
                let outcome = e.withLock { es -> Bool? in
                    // Written to meanwhile (by a user that came and went): saved again first.
                    if es.users == 1 && es.recordBehind && saves < 2 { return nil }
                    es.users -= 1
                    if asHandle { es.openHandles -= 1 }
                    return es.users == 0
                }
                guard outcome == true else { return outcome }
                close(e.fd)
                let recorded = e.withLock { es in es.recorded }
                let current = t.entries[e.id] === e
                // Never recorded: no byte arrived, and nothing would ever evict the (empty) file.
                if !recorded && current { unlink(path(e.file)) }
                // Replaced by a newer version or deleted while in use (out of the table), its last
                // user gone: a file no record and no other entry names (it never got a record, or
                // its record went with a delete or was replaced by a rename) would be left for
                // lost+found. The store is read under this lock, which a record's move takes.
                else if !current && !t.entries.values.contains(where: { $0.file == e.file })
                            && !t.superseded.contains(where: { $0 !== e && $0.file == e.file })
                            && (try? store.namesContentFile(e.file)) == false {
                    unlink(path(e.file))
                }
                if t.entries[e.id] === e { t.entries[e.id] = nil }
                t.superseded.removeAll { $0 === e }
                return true
            }
            if last != nil { return }
        }
    }

    /// How much of an item's current version is on disk (for status).
    public func presentBytes(of id: ItemIdentifier, version: String) -> Int64 {
        let e = table.withLock { t in t.entries[id] }
        if let e { return e.withLock { es in es.version == version && !es.stale ? es.ranges.count : 0 } }
        guard let r = try? store.contentRecord(id), r.version == version else { return 0 }
        return r.ranges.count
    }

    /// The entry of `id` while a handle has it open.
    func openEntry(_ id: ItemIdentifier) -> ContentEntry? {
        table.withLock { t in openEntryLocked(&t, id) }
    }

    /// `openEntry` with the lock held.
    func openEntryLocked(_ t: inout EntryTable, _ id: ItemIdentifier) -> ContentEntry? {
        guard let e = t.entries[id], e.withLock({ es in es.openHandles > 0 && !es.stale }) else { return nil }
        return e
    }

    /// The cache file of an item, for uploads (opened read-only, independent of handles), and
    /// its length: for dirty content the file is the truth, not the placeholder.
    func openForUpload(_ id: ItemIdentifier) throws -> (fd: Int32, length: Int64) {
        // An entry still open names its file; else the record does.
        let open = table.withLock { t in t.entries[id].flatMap { e in e.withLock { es in es.stale || es.deleted ? nil : e.file } } }
        guard let file = try open ?? store.contentRecord(id)?.file else {
            throw ProviderError(.localIO, path: id.rawValue, detail: "the cached content to upload is missing")
        }
        let fd = Glibc.open(path(file), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw localError("cannot open the cached content to upload", id) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { let err = localError("cannot stat the cached content", id); close(fd); throw err }
        return (fd, Int64(st.st_size))
    }
}
