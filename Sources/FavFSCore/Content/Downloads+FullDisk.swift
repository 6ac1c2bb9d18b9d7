import CLinux
import Foundation

/// A file larger than the free space of the cache disk streams: when a download finds the disk
/// full, room is made from other content first, then from the file's own clean bytes that no
/// reader is at.
extension Downloads {
    /// Bytes a download of `span` of `e` may free when the disk is full, in this order: least
    /// recently used other content (`evictForSpace`), the bytes of `e` its reader has passed,
    /// then the bytes of `e` away from `span` (left by an earlier read, fetched ahead of a
    /// reader that went elsewhere: kept, they would hold the disk full for good). Returns the
    /// bytes freed.
    func makeRoom(for e: ContentEntry, item: Item, span: Range<Int64>) async -> Int64 {
        let needed = Int64(span.count)
        var freed = eviction.evictForSpace(needed: needed, except: e.id, for: "to read \(item.identifier)")
        if freed < needed {
            let passed = await dropOwnBytes(e) { s in
                let end = min(span.lowerBound, s.servedUpTo) - self.chunkSize
                return end > 0 ? [0..<end] : []
            }
            let away = freed + passed < needed ? await dropOwnBytes(e) { s in
                [0..<max(0, span.lowerBound - self.chunkSize), min(s.size, span.upperBound + Self.readAheadSpan)..<s.size]
            } : 0
            if passed + away > 0 {
                log.info("the cache disk is full: \(item.identifier) streams; dropped \(passed + away) bytes of it already read or not near the reader")
            }
            freed += passed + away
        }
        return freed
    }

    /// Drops (punches out of the sparse cache file) the clean bytes of `e` within the ranges
    /// `within` names (asked with the entry's lock held), whole chunks only: a punch frees
    /// whole blocks, and the holes it leaves are what `CacheFileHoles` finds when a record
    /// still names them. Never dirty or deleted-while-open content (the only copy), never
    /// while a reply is being sent from the file (it waits up to a second for none to be).
    /// Returns the bytes dropped.
    func dropOwnBytes(_ e: ContentEntry, within: @escaping (ContentEntryState) -> [Range<Int64>]) async -> Int64 {
        guard let dirty = cache.dirtyItems(), !dirty.contains(e.id) else { return 0 }
        for _ in 0..<100 {
            let dropped: [Range<Int64>]? = e.withLock { es -> [Range<Int64>]? in
                guard es.serving == 0 else { return nil }
                guard !es.deleted, !es.stale else { return [] }
                var present = ByteRangeSet(within(es).flatMap { area in
                    es.ranges.ranges.compactMap { r in wholeChunks(in: r.clamped(to: area)) }
                })
                // Nor what a download in flight brought so far, nor any part of a range a reader
                // waits for: it waits for the whole of it, and would find it short.
                for c in es.inflight.keys { present.remove((c * chunkSize)..<((c + 1) * chunkSize)) }
                for w in es.waiters { present.remove(chunksTouching(w.range)) }
                // Under the entry's lock: a reader finds these bytes either present and whole
                // (before) or absent (after), never punched while it is served from them.
                for r in present.ranges {
                    es.ranges.remove(r)
                    if favfs_punch_hole(e.fd, off_t(r.lowerBound), off_t(r.count)) != 0 {
                        log.warning("cannot free the read part of \(es.id)'s cache file: \(String(cString: strerror(errno)))")
                    }
                }
                return present.ranges
            }
            if let dropped { return dropped.reduce(Int64(0)) { $0 + Int64($1.count) } }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return 0
    }

    /// The whole chunks within `r`; nil when there is none.
    private func wholeChunks(in r: Range<Int64>) -> Range<Int64>? {
        let lo = (r.lowerBound + chunkSize - 1) / chunkSize * chunkSize, hi = r.upperBound / chunkSize * chunkSize
        return lo < hi ? lo..<hi : nil
    }

    /// The chunks `r` touches, whole.
    private func chunksTouching(_ r: Range<Int64>) -> Range<Int64> {
        (r.lowerBound / chunkSize * chunkSize)..<((r.upperBound + chunkSize - 1) / chunkSize * chunkSize)
    }
}
