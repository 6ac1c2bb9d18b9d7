import CLinux
import Foundation
import Synchronization
import Logging

/// Content of items on local disk: one sparse file per materialized item under `directory`, its
/// present ranges persisted in the store. startProviding fetches missing chunks (sharing
/// downloads between readers); stopProviding evicts, least recently used first, never an open
/// file, a pinned item or one with a download in flight.
public final class ContentCache: @unchecked Sendable {
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

    let lock = NSLock()
    var entries: [ItemIdentifier: ContentEntry] = [:]
    /// Entries a newer version replaced while in use (stale), until their last user goes: they
    /// follow their file's renames and deletion here, so a handle on one knows whether its
    /// file was deleted (its writes then stay private) or is still there at another version.
    private var superseded: [ContentEntry] = []
    private var nextFile: Int64
    private var evictionPending = false
    /// The eviction passes this cache started (`scheduleEviction`): `stopEvicting` ends them
    /// before the store closes.
    private let passes = OwnedTasks()
    /// Set at unmount (`stopDownloads`): no download starts any more. Atomic, not under `lock`:
    /// it is read with an entry's lock held.
    private let closing = Atomic<Bool>(false)
    private var lastEviction: Double = 0
    static let evictionInterval: Double = 0.5
    /// On a remote whose partial reads cost a connection, a read this close to the end of the
    /// file reads to the end (a `head` of a bigger file still reads only what it asked for).
    static let readToTheEndBelow: Int64 = 8 << 20
    /// How far apart the reads of one read-ahead window of the kernel can arrive out of order
    /// (`read_ahead_kb`, which a mount made by root raises to 1 MiB).
    static let readAheadSpan: Int64 = 1 << 20
    /// Whether an item is pinned (the domain's pins; a folder's pin covers what is below it).
    private var pinnedCheck: (@Sendable (ItemIdentifier) -> Bool)?

    public init(directory: URL, store: PlaceholderStore, limit: Int64,
                chunkSize: Int64 = 128 << 10, maxRequestSize: Int64 = 2 << 20) throws {
        self.directory = directory
        self.directoryPath = directory.path
        self.store = store
        self.limit = limit
        self.chunkSize = chunkSize
        self.maxRequestSize = maxRequestSize
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        nextFile = try store.maxContentFileNumber() + 1
    }

    /// A cache file's path (plain string concatenation: building a URL for every file opened
    /// was 2.5% of favfs's CPU copying small files).
    func path(_ file: String) -> String { directoryPath + "/" + file }
    private let directoryPath: String

    private func localError(_ what: String, _ id: ItemIdentifier, _ err: Int32 = errno) -> ProviderError {
        // Past what the cache disk's file system holds (ext4: 16 TiB): the file is too large.
        ProviderError(err == ENOSPC ? .noSpace : err == EFBIG ? .tooLarge : .localIO,
                      path: id.rawValue,
                      detail: "\(what) in cache \(directory.path): \(String(cString: strerror(err)))")
    }

    /// Opens (creating if needed) the content entry of `item` at `version`. Content cached for an
    /// older version is discarded — unless `local` (the item is dirty: the cache file holds the
    /// only copy of its content, whatever version it is recorded under). Balance with `release`.
    ///
    /// `recordLater`: a new entry is not recorded here; the caller records it in its own
    /// transaction and then calls `recorded(_:)` (until then the file goes with a release).
    func retain(item: Item, version: String, asHandle: Bool, local: Bool = false, recordLater: Bool = false) throws -> ContentEntry {
        lock.lock(); defer { lock.unlock() }
        if let e = entries[item.identifier] {
            let replaced = e.withLock { () -> Bool in
                if (e.version == version || local) && !e.stale { return false }
                return true
            }
            if !replaced {
                e.withLock { e.users += 1; if asHandle { e.openHandles += 1 }; e.lastUsed = Date().timeIntervalSince1970 }
                return e
            }
            // A new version while the old one is still in use: the old entry lives on for its
            // users (stale), the new content gets a new file.
            e.withLock { e.stale = true }
            entries[item.identifier] = nil
            superseded.append(e)
        }
        let record = try? store.contentRecord(item.identifier)
        let file: String
        var ranges = ByteRangeSet()
        var pinned = false
        if let record {
            file = record.file
            pinned = record.pinned
            if local || (record.version == version && record.size == item.size) { ranges = record.ranges }
        } else {
            file = String(nextFile); nextFile += 1
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
        }
        let e = ContentEntry(id: item.identifier, file: file, fd: fd, version: version, size: size,
                             ranges: ranges, lastUsed: Date().timeIntervalSince1970, pinned: pinned)
        e.users = 1
        if asHandle { e.openHandles = 1 }
        entries[item.identifier] = e
        if record == nil && recordLater {
            e.recorded = false
        } else if record == nil && !local {
            // A new, empty entry: nothing to record until bytes arrive (the download records
            // it). No database write on open: a large listing being saved holds the write lock
            // for up to a second, and a first read must not wait behind it.
            e.recorded = false
        } else {
            do { try saveRecord(e) } catch { log.warning("cannot record cache entry for \(item.identifier): \(error)") }
        }
        return e
    }

    /// Keeps an entry's file open for background work; balance with `release(_, asHandle: false)`.
    func hold(_ e: ContentEntry) { e.withLock { e.users += 1 } }

    /// Gives back what `retain` took; the file closes when nothing uses it.
    func release(_ e: ContentEntry, asHandle: Bool) {
        lock.lock(); defer { lock.unlock() }
        let last = e.withLock { () -> Bool in
            e.users -= 1
            if asHandle { e.openHandles -= 1 }
            return e.users == 0
        }
        guard last else { return }
        // The store must hold what is on disk before the entry goes: the next open and the
        // state attribute read it from there.
        if e.withLock({ e.recorded && !e.stale && !e.deleted && e.savedBytes != e.ranges.count }) {
            do { try saveRecord(e) } catch { log.warning("cannot record cached ranges of \(e.id): \(error)") }
        }
        close(e.fd)
        // Never recorded: no byte arrived, and nothing would ever evict the (empty) file.
        if !e.withLock({ e.recorded }) && entries[e.id] === e { unlink(path(e.file)) }
        if entries[e.id] === e { entries[e.id] = nil }
        superseded.removeAll { $0 === e }
    }

    /// startProviding: makes `range` of the item present, downloading missing chunks (shared
    /// with other readers), and starts fetching `prefetch` in the background without waiting.
    func provide(_ e: ContentEntry, item: Item, range: Range<Int64>, prefetch: Range<Int64>?, provider: any Provider) async throws {
        let wanted = range.clamped(to: 0..<max(0, e.withLock { e.size }))
        let mustWait: Bool = try e.withLock {
            if e.stale { throw staleError(item, provider) }
            if closing.load(ordering: .acquiring) {
                throw ProviderError(.cancelled, remote: provider.remoteDescription, path: item.identifier.rawValue, detail: "unmounting")
            }
            // Deleted: the remote has no such content any more (or other content at the name).
            if e.deleted {
                if e.ranges.contains(wanted) { return false }
                throw ProviderError(.versionChanged, remote: provider.remoteDescription, path: item.identifier.rawValue,
                                    detail: "the file was deleted while open and this part of it was never downloaded")
            }
            let tasks = wanted.isEmpty ? [] : schedule(e, item: item, wanted, provider: provider)
            // Read-ahead waits for the reader's own chunks: started together, it competes with
            // them (on a cold server disk the first byte took twice as long).
            if tasks.isEmpty, let prefetch { _ = schedule(e, item: item, prefetch.clamped(to: 0..<e.size), provider: provider) }
            return !tasks.isEmpty
        }
        if mustWait {
            // Resumed by the transfer's progress as soon as these bytes are written, or by the
            // end of the requests that cover them.
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
                e.withLock {
                    if e.stale { c.resume(throwing: staleError(item, provider)) }
                    else if e.ranges.contains(wanted) { c.resume() }
                    else if !isInFlight(e, wanted) { c.resume(throwing: shortError(item, provider)) }
                    else { e.waiters.append(RangeWaiter(range: wanted, continuation: c)) }
                }
            }
            if let prefetch {
                e.withLock { if !e.stale { _ = schedule(e, item: item, prefetch.clamped(to: 0..<e.size), provider: provider) } }
            }
        }
        let ok = e.withLock { e.ranges.contains(range.clamped(to: 0..<e.size)) }
        if !ok { throw shortError(item, provider) }
    }

    private func staleError(_ item: Item, _ provider: any Provider) -> ProviderError {
        ProviderError(.versionChanged, remote: provider.remoteDescription, path: item.identifier.rawValue,
                      detail: "the file changed on the server while it was open; reopen it")
    }

    private func shortError(_ item: Item, _ provider: any Provider) -> ProviderError {
        ProviderError(.invalidResponse, remote: provider.remoteDescription, path: item.identifier.rawValue,
                      detail: "the server sent fewer bytes than the file's size \(item.size)")
    }

    /// True when a download in flight covers some missing chunk of `r` (lock held).
    private func isInFlight(_ e: ContentEntry, _ r: Range<Int64>) -> Bool {
        guard !r.isEmpty else { return false }
        for c in (r.lowerBound / chunkSize)...((r.upperBound - 1) / chunkSize) where e.inflight[c] != nil { return true }
        return false
    }

    /// Starts downloads for the missing chunks of `r` not already in flight; returns every task
    /// covering `r`. Call with `e.lock` held.
    private func schedule(_ e: ContentEntry, item: Item, _ wanted: Range<Int64>, provider: any Provider) -> [Task<Void, Error>] {
        guard !wanted.isEmpty else { return [] }
        // Where stopping early costs a connection, the rest of a small file comes in one read.
        let toTheEnd = provider.capabilities.contains(.partialReadsCostAConnection) && e.size - wanted.lowerBound <= Self.readToTheEndBelow
        let r = toTheEnd ? startOfMissingRun(e, before: wanted.lowerBound)..<e.size : wanted
        var tasks: [Task<Void, Error>] = []
        var run: [Int64] = []
        func flush() {
            guard let first = run.first, let last = run.last else { return }
            let span = (first * chunkSize)..<min((last + 1) * chunkSize, e.size)
            let chunks = run
            run = []
            e.users += 1
            let t = Task { [self] in
                var failure: Error?
                defer { self.finishDownload(e, chunks: chunks, span: span, failure: failure) }
                do { try await self.download(e, item: item, span: span, provider: provider) } catch { failure = error; throw error }
            }
            for c in chunks { e.inflight[c] = t }
            tasks.append(t)
        }
        let firstChunk = r.lowerBound / chunkSize, lastChunk = (r.upperBound - 1) / chunkSize
        for c in firstChunk...lastChunk {
            let cr = (c * chunkSize)..<min((c + 1) * chunkSize, e.size)
            if e.ranges.contains(cr) { flush(); continue }
            if let t = e.inflight[c] { flush(); tasks.append(t); continue }
            run.append(c)
            if !toTheEnd && Int64(run.count) * chunkSize >= maxRequestSize { flush() }
        }
        flush()
        return tasks
    }

    /// Where a read to the end starting at `offset` should start instead: at the first of the
    /// missing chunks (not in flight) right before it; in a file larger than
    /// `readToTheEndBelow`, at most `readAheadSpan` back. The kernel sends the reads of its
    /// read-ahead window in parallel and a later one may arrive first (in a file of 2.5 MB,
    /// one at 1.5 MiB before the one at 0 was seen); a request started there alone would leave
    /// the earlier read a request that stops where this one starts, which over FTP is an abort
    /// and a new login. Lock held.
    private func startOfMissingRun(_ e: ContentEntry, before offset: Int64) -> Int64 {
        var c = offset / chunkSize
        let lowest = e.size <= Self.readToTheEndBelow ? 0 : max(0, offset - Self.readAheadSpan) / chunkSize
        while c > lowest {
            let previous = ((c - 1) * chunkSize)..<(c * chunkSize)
            if e.ranges.contains(previous) || e.inflight[c - 1] != nil { break }
            c -= 1
        }
        return min(offset, c * chunkSize)
    }

    private func download(_ e: ContentEntry, item: Item, span: Range<Int64>, provider: any Provider) async throws {
        do {
            try await downloadOnce(e, item: item, span: span, provider: provider)
        } catch let error as ProviderError where error.kind == .noSpace {
            // The cache disk is full: make room from least recently used clean content, and
            // try once more. If nothing can go, this read fails with ENOSPC and the mount stays.
            var freed = evictForSpace(needed: Int64(span.count), except: e.id, for: "to read \(item.identifier)")
            if freed < Int64(span.count) {
                // Larger than the disk: the file streams, dropping what its reader has passed.
                let dropped = await dropPassed(e, before: span.lowerBound)
                if dropped > 0 {
                    log.info("the cache disk is full: \(item.identifier) streams; dropped \(dropped) bytes of it already read")
                }
                freed += dropped
            }
            guard freed > 0 else { throw error }
            try await downloadOnce(e, item: item, span: span, provider: provider)
        }
    }

    private func downloadOnce(_ e: ContentEntry, item: Item, span: Range<Int64>, provider: any Provider) async throws {
        do {
            // Bytes count as present as they land, so readers of the first chunk of a 2 MiB
            // request do not wait for its last.
            let sink = ContentSink(fd: e.fd) { written in
                e.withLock {
                    guard !e.stale else { return }
                    e.ranges.insert(written.clamped(to: 0..<e.size))
                    e.resumeSatisfied()
                }
            }
            let total = e.withLock { e.size }
            let written = try await transfers.track(item.identifier, .download, total: total, done: { e.withLock { e.ranges.count } }) {
                try await provider.readContents(of: item, range: span, into: sink)
            }
            e.withLock {
                e.ranges.insert(written.clamped(to: 0..<e.size))
                e.lastUsed = Date().timeIntervalSince1970
                e.resumeSatisfied()
                e.recorded = true
            }
            // Off the cooperative pool: the write waits for SQLite's writer, which a large
            // listing being saved holds for up to a second, and readers' tasks need the pool.
            do {
                try await BlockingWork.run { try self.saveRecord(e) }
            } catch where PlaceholderStore.isDiskFull(error) && evictForSpace(needed: 1 << 20, except: item.identifier,
                                                                                      for: "to record what was read of \(item.identifier)") > 0 {
                do { try await BlockingWork.run { try self.saveRecord(e) } }
                catch { log.warning("cannot record cached ranges of \(item.identifier): \(error)") }
            } catch {
                log.warning("cannot record cached ranges of \(item.identifier): \(error)")
            }
        } catch let error as ProviderError where error.kind == .versionChanged {
            e.withLock { e.stale = true; e.ranges.removeAll() }
            try? store.deleteContent(item.identifier)
            throw error
        }
    }

    /// A request ended: waiters it was to satisfy and did not are failed with its error (or, when
    /// nothing else is bringing their bytes, as short), the others stay for their own requests.
    private func finishDownload(_ e: ContentEntry, chunks: [Int64], span: Range<Int64>, failure: Error?) {
        e.withLock {
            for c in chunks { e.inflight[c] = nil }
            e.resumeSatisfied()
            if e.stale {
                e.fail(ProviderError(.versionChanged, path: e.id.rawValue, detail: "the file changed on the server while it was open; reopen it")) { _ in true }
                return
            }
            if let failure { e.fail(failure) { $0.range.overlaps(span) } }
            e.fail(ProviderError(.invalidResponse, path: e.id.rawValue, detail: "the server sent fewer bytes than asked for")) {
                !self.isInFlight(e, $0.range)
            }
        }
        release(e, asHandle: false)
        scheduleEviction()
    }

    // MARK: stopProviding

    /// Runs `evictIfNeeded` in the background, off the reader's path. Calls while a run is
    /// pending fold into it, so a burst of downloads or closes costs one pass.
    func scheduleEviction() {
        let start = lock.withLock { () -> Bool in
            if evictionPending { return false }
            evictionPending = true
            return true
        }
        guard start else { return }
        passes.start(priority: .utility) { [self] in
            // At most one pass per `evictionInterval`: a pass sums the whole content table,
            // and `cp -r` of thousands of files closes one every few hundred microseconds.
            let wait = lock.withLock { lastEviction + Self.evictionInterval - Date().timeIntervalSince1970 }
            if wait > 0 { try? await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
            if Task.isCancelled { return }
            // Cleared first: a change made while this pass runs schedules the next one.
            lock.withLock {
                evictionPending = false
                lastEviction = Date().timeIntervalSince1970
            }
            evictIfNeeded()
        }
    }

    /// Sets how pinned items are told apart (once, by the domain).
    func setPinnedCheck(_ check: @escaping @Sendable (ItemIdentifier) -> Bool) { lock.withLock { pinnedCheck = check } }

    /// Pinned content: never evicted, and not counted against `limit`.
    func isPinned(_ r: PlaceholderStore.ContentRecord) -> Bool {
        r.pinned || (lock.withLock { pinnedCheck }?(r.id) ?? false)
    }

    /// Evicts least recently used content until the cache is within `limit` (pinned content
    /// does not count).
    public func evictIfNeeded() {
        guard let total = try? store.contentBytes(), total > limit else { return }
        let records = (try? store.contentByLastUse()) ?? []
        let pinned = records.filter(isPinned)
        var excess = total - pinned.reduce(0) { $0 + $1.ranges.count } - limit
        guard let dirty = dirtyItems() else { return }
        for r in records where excess > 0 {
            if isPinned(r) || r.ranges.isEmpty || dirty.contains(r.id) { continue }
            if evict(r) { excess -= r.ranges.count }
        }
    }

    /// Streaming a file larger than the cache disk: drops (punches out of the sparse cache
    /// file) the clean bytes of `e` that its reader has passed — below both `offset` and where
    /// the last reply ended, less one chunk kept for a reader stepping back. Never dirty or
    /// deleted-while-open content (the only copy), never while a reply is being sent from the
    /// file (it waits up to a second for none to be). Returns the bytes dropped.
    func dropPassed(_ e: ContentEntry, before offset: Int64) async -> Int64 {
        guard let dirty = dirtyItems(), !dirty.contains(e.id) else { return 0 }
        for _ in 0..<100 {
            let dropped: [Range<Int64>]? = e.withLock { () -> [Range<Int64>]? in
                guard e.serving == 0 else { return nil }
                let end = min(offset, e.servedUpTo) - chunkSize
                guard !e.deleted, !e.stale, end > 0 else { return [] }
                let passed = e.ranges.ranges.compactMap { r -> Range<Int64>? in
                    let c = r.clamped(to: 0..<end)
                    return c.isEmpty ? nil : c
                }
                // Under the entry's lock: a reader finds these bytes either present and whole
                // (before) or absent (after), never punched while it is served from them.
                for r in passed {
                    e.ranges.remove(r)
                    if favfs_punch_hole(e.fd, off_t(r.lowerBound), off_t(r.count)) != 0 {
                        log.warning("cannot free the read part of \(e.id)'s cache file: \(String(cString: strerror(errno)))")
                    }
                }
                return passed
            }
            if let dropped { return dropped.reduce(Int64(0)) { $0 + Int64($1.count) } }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return 0
    }

    /// The cache disk is full: evicts least recently used clean content (not pinned, not
    /// dirty, not in use, not `except`) until about twice `needed` bytes are freed, and says so
    /// in the log (`purpose`: what the space is for). Returns the bytes freed.
    func evictForSpace(needed: Int64, except: ItemIdentifier, for purpose: String) -> Int64 {
        var freed: Int64 = 0
        guard let dirty = dirtyItems() else { return 0 }
        for r in (try? store.contentByLastUse()) ?? [] where freed < 2 * max(needed, chunkSize) {
            if isPinned(r) || r.ranges.isEmpty || dirty.contains(r.id) || r.id == except { continue }
            if evict(r) { freed += r.ranges.count }
        }
        if freed > 0 { log.warning("the cache disk is full: evicted \(freed) bytes of least recently used content \(purpose)") }
        return freed
    }

    /// stopProviding: drops the cached content of one item (not if open, pinned or downloading).
    @discardableResult
    func evict(_ r: PlaceholderStore.ContentRecord) -> Bool {
        lock.lock(); defer { lock.unlock() }
        if let e = entries[r.id], e.withLock({ e.users > 0 }) { return false }
        unlink(path(r.file))
        try? store.deleteContent(r.id)
        return true
    }

    /// What `evictUnlessDirty` did with an item's content.
    enum FreeingOutcome: Equatable { case evicted, open, downloading, notUploaded }

    /// Free up space for one item: drops its cached content unless a handle or a download uses
    /// it, or it is dirty (the only copy). Both are checked under this cache's lock, which a
    /// write needs first (`retain`): content found clean here cannot turn dirty before it goes.
    func evictUnlessDirty(_ r: PlaceholderStore.ContentRecord) -> FreeingOutcome {
        lock.lock(); defer { lock.unlock() }
        if let e = entries[r.id], let busy = e.withLock({ e.users > 0 ? e.openHandles > 0 : nil }) {
            return busy ? .open : .downloading
        }
        // Unreadable journal: anything could be dirty.
        guard (try? store.hasJournal(r.id)) == false else { return .notUploaded }
        unlink(path(r.file))
        try? store.deleteContent(r.id)
        return .evicted
    }

    /// Items whose cached content is the only copy (dirty): never evicted. Nil when the journal
    /// cannot be read: then nothing may be evicted, since anything could be dirty.
    private func dirtyItems() -> Set<ItemIdentifier>? {
        do {
            return Set(try store.journalEntries().map(\.id))
        } catch {
            log.error("cannot read the upload journal (\(error)): nothing is evicted")
            return nil
        }
    }

    /// Unmount: no new download starts; those running (read-ahead, prefetch) are cancelled and
    /// awaited for up to `timeout` seconds, so that their entries are released and recorded
    /// and `evictAll` finds nothing in use.
    /// Cancels the eviction pass waiting to run and waits for one running (`scheduleEviction`);
    /// none starts after. Before `evictAll` and the store's close at unmount.
    public func stopEvicting(within seconds: Double) async -> Int {
        await passes.shutdown(within: seconds)
    }

    public func stopDownloads(timeout: Double) {
        closing.store(true, ordering: .releasing)
        let running = lock.withLock { entries.values.flatMap { e in e.withLock { Array(e.inflight.values) } } }
        for t in running { t.cancel() }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, lock.withLock({ entries.values.contains { e in e.withLock { !e.inflight.isEmpty } } }) {
            usleep(10_000)
        }
    }

    /// Evicts everything that is not pinned, dirty or in use (unmount). Returns files and bytes freed.
    public func evictAll() -> (files: Int, bytes: Int64) {
        var files = 0, bytes: Int64 = 0
        guard let dirty = dirtyItems() else { return (0, 0) }
        for r in (try? store.contentByLastUse()) ?? [] where !isPinned(r) && !dirty.contains(r.id) {
            if evict(r) { files += 1; bytes += r.ranges.count }
        }
        files += rescueUnknownFiles()
        return (files, bytes)
    }

    /// How much of an item's current version is on disk (for status).
    public func presentBytes(of id: ItemIdentifier, version: String) -> Int64 {
        lock.lock()
        let e = entries[id]
        lock.unlock()
        if let e { return e.withLock { e.version == version && !e.stale ? e.ranges.count : 0 } }
        guard let r = try? store.contentRecord(id), r.version == version else { return 0 }
        return r.ranges.count
    }

    // MARK: local changes

    /// Writes `buffer` at `offset` into the cache file (the item is dirty); the bytes are present.
    func write(_ e: ContentEntry, offset: Int64, _ buffer: UnsafeRawBufferPointer) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pwrite(e.fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw localError("cannot write", e.id)
            }
            done += n
        }
        e.withLock {
            // A write past the end leaves a hole of zeros: part of the (local) content too.
            e.ranges.insert(min(offset, e.size)..<offset + Int64(done))
            e.size = max(e.size, offset + Int64(done))
            e.lastUsed = Date().timeIntervalSince1970
        }
        return done
    }

    /// Truncates or extends the cache file; bytes past the old end are zeros, and present.
    func setSize(_ e: ContentEntry, _ size: Int64) throws {
        guard ftruncate(e.fd, off_t(size)) == 0 else { throw localError("cannot truncate", e.id) }
        e.withLock {
            if size > e.size { e.ranges.insert(e.size..<size) } else { e.ranges.clamp(to: size) }
            e.size = size
        }
    }

    /// A `recordLater` entry's record was written by the caller.
    func recorded(_ e: ContentEntry) {
        e.withLock { e.recorded = true; e.savedBytes = e.ranges.count }
    }

    /// Persists an entry's ranges and size now (after local writes).
    func persist(_ e: ContentEntry, with item: Item? = nil) {
        e.withLock { e.recorded = true }
        do { try saveRecord(e, with: item) } catch { log.warning("cannot record cache entry for \(e.withLock { e.id }): \(error)") }
    }

    /// Writes the entry's current record. Concurrent downloads of one file each end with a save;
    /// the snapshot is taken under `saveLock` so the last write is always the newest state
    /// (an older snapshot saved last made a fully read file look partial after it closed).
    /// A stale entry is not saved: its record was deleted and must stay deleted.
    /// `item`, when given, is saved in the same transaction (its placeholder after a write).
    func saveRecord(_ e: ContentEntry, with item: Item? = nil) throws {
        try e.saveLock.withLock {
            // Deleted (or replaced by a rename) while open: its record is gone and the name may
            // be another item's now, whose record this must not overwrite.
            guard let r = e.withLock({ e.stale || e.deleted ? nil : e.record }) else {
                if let item { try store.upsert(item) }
                return
            }
            try store.saveContent(r, with: item)
            e.withLock { e.savedBytes = r.ranges.count }
        }
    }

    /// Records the version content now belongs to (after an upload the remote confirmed).
    func setVersion(_ id: ItemIdentifier, _ version: String) {
        lock.lock(); defer { lock.unlock() }
        if let e = entries[id] { e.withLock { e.version = version } }
    }

    /// Forgets the content record of `id` (a new file is being created there) and removes its
    /// cache file unless an open entry still uses it (a file deleted while open). Found by the
    /// reference model: a new empty file read the content of the file deleted before it.
    func dropStaleRecord(_ id: ItemIdentifier) {
        guard let r = try? store.contentRecord(id) else { return }
        let inUse = lock.withLock { entries.values.contains { $0.file == r.file } }
        if !inUse { unlink(path(r.file)) }
        try? store.deleteContent(id)
    }

    /// `setVersion`, only if the open entry still has version `old`.
    func setVersion(_ id: ItemIdentifier, _ version: String, ifStill old: String) {
        lock.lock(); defer { lock.unlock() }
        if let e = entries[id] { e.withLock { if e.version == old { e.version = version } } }
    }

    /// Follows a rename: `record` moves the records in the store, and open entries at and
    /// below `from` answer to `to`. Their record saves wait meanwhile (their `saveLock`s are
    /// held), so none lands under the old name after the store moved: such a row would point a
    /// later item of that name at this cache file.
    /// `version`: the version the moved content is recorded under from now on (a local edit
    /// handed to its conflict copy).
    func move(_ from: ItemIdentifier, to: ItemIdentifier, version: String? = nil, record: () throws -> Void) rethrows {
        lock.lock(); defer { lock.unlock() }
        let prefix = from.rawValue + "/"
        let moving = entries.filter { $0.key == from || $0.key.rawValue.hasPrefix(prefix) }
        for (_, e) in moving { e.saveLock.lock() }
        defer { for (_, e) in moving { e.saveLock.unlock() } }
        try record()
        for (id, e) in moving {
            let newId = ItemIdentifier(to.rawValue + id.rawValue.dropFirst(from.rawValue.count))
            entries[id] = nil
            e.withLock { e.id = newId; if let version { e.version = version } }
            entries[newId] = e
        }
        for e in superseded {
            e.withLock {
                if e.id == from || e.id.rawValue.hasPrefix(prefix) {
                    e.id = ItemIdentifier(to.rawValue + e.id.rawValue.dropFirst(from.rawValue.count))
                }
            }
        }
    }

    /// The entry of `id` while a handle has it open.
    func openEntry(_ id: ItemIdentifier) -> ContentEntry? {
        lock.lock(); defer { lock.unlock() }
        guard let e = entries[id], e.withLock({ e.openHandles > 0 && !e.stale }) else { return nil }
        return e
    }

    /// Drops an item's content for good (it was deleted); open handles keep their file until closed.
    func remove(_ id: ItemIdentifier) {
        lock.lock(); defer { lock.unlock() }
        _ = detachLocked(id)
        if let r = try? store.contentRecord(id) { unlink(path(r.file)) }
        try? store.deleteContent(id)
    }

    /// `remove` in two steps, for a caller holding a lock no SQLite call may run under
    /// (`Domain.lock`): this one forgets the open entries of `id` (marked deleted) and returns
    /// the cache file of the one in use; `removeRecord` then deletes that file and its record.
    func detach(_ id: ItemIdentifier) -> String? {
        lock.withLock { detachLocked(id) }
    }

    private func detachLocked(_ id: ItemIdentifier) -> String? {
        let file = entries[id]?.file
        if let e = entries[id] { e.withLock { e.deleted = true }; entries[id] = nil }
        for e in superseded where e.withLock({ e.id == id }) { e.withLock { e.deleted = true } }
        return file
    }

    /// The second step of `remove` (after `detach`): the cache file `file` goes, with the record
    /// of `id` if it still names that file (not one a newer entry recorded meanwhile).
    func removeRecord(_ id: ItemIdentifier, file: String) {
        unlink(path(file))
        try? store.deleteContent(id, file: file)
    }

    /// The cache file of an item, for uploads (opened read-only, independent of handles), and
    /// its length: for dirty content the file is the truth, not the placeholder.
    func openForUpload(_ id: ItemIdentifier) throws -> (fd: Int32, length: Int64) {
        // An entry still open names its file; else the record does.
        let open = lock.withLock { entries[id].flatMap { e in e.withLock { e.stale || e.deleted ? nil : e.file } } }
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
