import Foundation
import Logging
import Synchronization

/// startProviding: missing chunks of a file are fetched into its cache file in requests shared
/// by its readers, each read waiting only for its own bytes (`provide`); on a full cache disk
/// room is made first (`+FullDisk`). The cache files, their entries and records, and eviction
/// are `ContentCache`'s; this part keeps no state of its own but `closing`: what is in flight
/// and who waits for it is each entry's (`ContentEntry.inflight`, `waiters`, under its lock).
final class Downloads: Sendable {
    let cache: ContentCache
    /// Frees room after a download and on a full cache disk.
    let eviction: Eviction
    /// Set at unmount (`stop`): no download starts any more. Atomic: it is read with an
    /// entry's lock held.
    let closing = Atomic<Bool>(false)
    let log = Logger(label: "favfs.content")

    init(cache: ContentCache, eviction: Eviction) {
        self.cache = cache
        self.eviction = eviction
    }

    /// Downloads are whole chunks: a 4 KiB read costs one chunk, not the file.
    var chunkSize: Int64 { cache.chunkSize }
    /// Longer missing runs are split into requests of at most this many bytes, fetched in parallel.
    var maxRequestSize: Int64 { cache.maxRequestSize }
    var store: PlaceholderStore { cache.store }
    var transfers: TransferRegistry { cache.transfers }

    /// On a remote whose partial reads cost a connection, a read this close to the end of the
    /// file reads to the end (a `head` of a bigger file still reads only what it asked for).
    static let readToTheEndBelow: Int64 = 8 << 20
    /// How far apart the reads of one read-ahead window of the kernel can arrive out of order
    /// (`read_ahead_kb`, which a mount made by root raises to 1 MiB).
    static let readAheadSpan: Int64 = 1 << 20

    /// Unmount: no new download starts; those running (read-ahead, prefetch) are cancelled and
    /// awaited for up to `timeout` seconds, so that their entries are released and recorded
    /// and `evictAll` finds nothing in use.
    func stop(timeout: Double) {
        closing.store(true, ordering: .releasing)
        for t in cache.downloadsInFlight() { t.cancel() }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, !cache.downloadsInFlight().isEmpty { usleep(10_000) }
    }

    /// startProviding: makes `range` of the item present, downloading missing chunks (shared
    /// with other readers), and starts fetching `prefetch` in the background without waiting.
    func provide(_ e: ContentEntry, item: Item, range: Range<Int64>, prefetch: Range<Int64>?, provider: any Provider) async throws {
        let wanted = range.clamped(to: 0..<max(0, e.withLock { es in es.size }))
        let mustWait: Bool = try e.withLock { es in
            if es.stale { throw staleError(item, provider) }
            if closing.load(ordering: .acquiring) {
                throw ProviderError(.cancelled, remote: provider.remoteDescription, path: item.identifier.rawValue, detail: "unmounting")
            }
            // Deleted: the remote has no such content any more (or other content at the name).
            if es.deleted {
                if es.ranges.contains(wanted) { return false }
                throw ProviderError(.versionChanged, remote: provider.remoteDescription, path: item.identifier.rawValue,
                                    detail: "the file was deleted while open and this part of it was never downloaded")
            }
            let tasks = wanted.isEmpty ? [] : schedule(e, &es, item: item, wanted, provider: provider)
            // Read-ahead waits for the reader's own chunks: started together, it competes with
            // them (on a cold server disk the first byte took twice as long).
            if tasks.isEmpty, let prefetch { _ = schedule(e, &es, item: item, prefetch.clamped(to: 0..<es.size), provider: provider) }
            return !tasks.isEmpty
        }
        if mustWait {
            // Resumed by the transfer's progress as soon as these bytes are written, or by the
            // end of the requests that cover them.
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
                e.withLock { es in
                    if es.stale { c.resume(throwing: staleError(item, provider)) }
                    else if es.ranges.contains(wanted) { c.resume() }
                    else if !isInFlight(es, wanted) { c.resume(throwing: shortError(item, provider)) }
                    else { es.waiters.append(RangeWaiter(range: wanted, continuation: c)) }
                }
            }
            if let prefetch {
                e.withLock { es in if !es.stale { _ = schedule(e, &es, item: item, prefetch.clamped(to: 0..<es.size), provider: provider) } }
            }
        }
        // Present when the wait ended; gone now only if dropped to make room for another
        // request on a full cache disk (never bytes a download in flight brings).
        let (ok, stale) = e.withLock { es in (es.ranges.contains(range.clamped(to: 0..<es.size)), es.stale) }
        if stale { throw staleError(item, provider) }
        if !ok {
            throw ProviderError(.noSpace, remote: provider.remoteDescription, path: item.identifier.rawValue,
                                detail: "the cache disk is full: the bytes read were dropped for another read before they were served")
        }
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
    private func isInFlight(_ s: ContentEntryState, _ r: Range<Int64>) -> Bool {
        guard !r.isEmpty else { return false }
        for c in (r.lowerBound / chunkSize)...((r.upperBound - 1) / chunkSize) where s.inflight[c] != nil { return true }
        return false
    }

    /// Starts downloads for the missing chunks of `r` not already in flight; returns every task
    /// covering `r`. `s`: the state of `e`, its lock held.
    private func schedule(_ e: ContentEntry, _ s: inout ContentEntryState, item: Item, _ wanted: Range<Int64>,
                          provider: any Provider) -> [Task<Void, Error>] {
        guard !wanted.isEmpty else { return [] }
        // Where stopping early costs a connection, the rest of a small file comes in one read.
        let toTheEnd = provider.capabilities.contains(.partialReadsCostAConnection) && s.size - wanted.lowerBound <= Self.readToTheEndBelow
        let r = toTheEnd ? startOfMissingRun(s, before: wanted.lowerBound)..<s.size : wanted
        var tasks: [Task<Void, Error>] = []
        var run: [Int64] = []
        func flush() {
            guard let first = run.first, let last = run.last else { return }
            let span = (first * chunkSize)..<min((last + 1) * chunkSize, s.size)
            let chunks = run
            run = []
            s.users += 1
            let t = Task { [self] in
                var failure: Error?
                defer { self.finishDownload(e, chunks: chunks, span: span, failure: failure) }
                do { try await self.download(e, item: item, span: span, provider: provider) } catch { failure = error; throw error }
            }
            for c in chunks { s.inflight[c] = t }
            tasks.append(t)
        }
        let firstChunk = r.lowerBound / chunkSize, lastChunk = (r.upperBound - 1) / chunkSize
        for c in firstChunk...lastChunk {
            let cr = (c * chunkSize)..<min((c + 1) * chunkSize, s.size)
            if s.ranges.contains(cr) { flush(); continue }
            if let t = s.inflight[c] { flush(); tasks.append(t); continue }
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
    private func startOfMissingRun(_ s: ContentEntryState, before offset: Int64) -> Int64 {
        var c = offset / chunkSize
        let lowest = s.size <= Self.readToTheEndBelow ? 0 : max(0, offset - Self.readAheadSpan) / chunkSize
        while c > lowest {
            let previous = ((c - 1) * chunkSize)..<(c * chunkSize)
            if s.ranges.contains(previous) || s.inflight[c - 1] != nil { break }
            c -= 1
        }
        return min(offset, c * chunkSize)
    }

    private func download(_ e: ContentEntry, item: Item, span: Range<Int64>, provider: any Provider) async throws {
        var rest = span
        var attempts = 0
        while true {
            do {
                try await downloadOnce(e, item: item, span: rest, provider: provider)
                return
            } catch let error as ProviderError where error.kind == .noSpace {
                // The cache disk is full: make room and try again from the first byte that did
                // not land; a few times, as other downloads take what was freed too. If nothing
                // can go, this read fails with ENOSPC and the mount stays.
                attempts += 1
                guard attempts < Self.attemptsOnAFullDisk, await makeRoom(for: e, item: item, span: rest) > 0 else { throw error }
                guard let missing = e.withLock({ es in es.ranges.missing(in: rest).first }) else { return }
                rest = missing.lowerBound..<rest.upperBound
            }
        }
    }

    /// Downloads of one request on a full cache disk, each after making room.
    static let attemptsOnAFullDisk = 4

    private func downloadOnce(_ e: ContentEntry, item: Item, span: Range<Int64>, provider: any Provider) async throws {
        do {
            // Bytes count as present as they land, so readers of the first chunk of a 2 MiB
            // request do not wait for its last.
            let sink = ContentSink(fd: e.fd) { written in
                e.withLock { es in
                    guard !es.stale else { return }
                    es.ranges.insert(written.clamped(to: 0..<es.size))
                    es.resumeSatisfied()
                }
            }
            let total = e.withLock { es in es.size }
            let written = try await transfers.track(item.identifier, .download, total: total, done: { e.withLock { es in es.ranges.count } }) {
                try await provider.readContents(of: item, range: span, into: sink)
            }
            e.withLock { es in
                es.ranges.insert(written.clamped(to: 0..<es.size))
                es.lastUsed = Date().timeIntervalSince1970
                es.resumeSatisfied()
                es.recorded = true
            }
            // Off the cooperative pool: the write waits for SQLite's writer, which a large
            // listing being saved holds for up to a second, and readers' tasks need the pool.
            do {
                try await BlockingWork.run { try e.saveRecord(to: self.cache.store) }
            } catch where PlaceholderStore.isDiskFull(error) && eviction.evictForSpace(needed: 1 << 20, except: item.identifier,
                                                                                      for: "to record what was read of \(item.identifier)") > 0 {
                do { try await BlockingWork.run { try e.saveRecord(to: self.cache.store) } }
                catch { log.warning("cannot record cached ranges of \(item.identifier): \(error)") }
            } catch {
                log.warning("cannot record cached ranges of \(item.identifier): \(error)")
            }
        } catch let error as ProviderError where error.kind == .versionChanged {
            e.withLock { es in es.stale = true; es.ranges.removeAll() }
            // Only this entry's record: the name may hold other content by now (a file renamed
            // onto it, not uploaded yet), whose record must stay.
            try? store.deleteContent(item.identifier, file: e.file)
            throw error
        }
    }

    /// A request ended: waiters it was to satisfy and did not are failed with its error (or, when
    /// nothing else is bringing their bytes, as short), the others stay for their own requests.
    private func finishDownload(_ e: ContentEntry, chunks: [Int64], span: Range<Int64>, failure: Error?) {
        e.withLock { es in
            for c in chunks { es.inflight[c] = nil }
            es.resumeSatisfied()
            if es.stale {
                es.fail(ProviderError(.versionChanged, path: es.id.rawValue, detail: "the file changed on the server while it was open; reopen it")) { _ in true }
                return
            }
            if let failure { es.fail(failure) { $0.range.overlaps(span) } }
            let now = es
            es.fail(ProviderError(.invalidResponse, path: es.id.rawValue, detail: "the server sent fewer bytes than asked for")) {
                !self.isInFlight(now, $0.range)
            }
        }
        cache.release(e, asHandle: false)
        eviction.schedule()
    }
}
