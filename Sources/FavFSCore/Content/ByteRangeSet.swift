/// The byte ranges of an item's content present in its cache file: sorted, disjoint, coalesced
/// half-open ranges. Persisted as text (`0-131072,262144-393216`) so it survives a restart.
public struct ByteRangeSet: Sendable, Equatable, CustomStringConvertible {
    public private(set) var ranges: [Range<Int64>] = []

    public init() {}
    public init(_ ranges: [Range<Int64>]) { for r in ranges { insert(r) } }

    /// Total bytes covered.
    public var count: Int64 { ranges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) } }
    public var isEmpty: Bool { ranges.isEmpty }

    /// Adds `r`, merging with touching or overlapping ranges.
    public mutating func insert(_ r: Range<Int64>) {
        guard !r.isEmpty else { return }
        var lo = r.lowerBound, hi = r.upperBound
        // First range whose end reaches lo (touching counts).
        var i = firstIndex(endingAtOrAfter: lo)
        let start = i
        while i < ranges.count && ranges[i].lowerBound <= hi {
            lo = min(lo, ranges[i].lowerBound)
            hi = max(hi, ranges[i].upperBound)
            i += 1
        }
        ranges.replaceSubrange(start..<i, with: [lo..<hi])
    }

    /// Removes everything.
    public mutating func removeAll() { ranges.removeAll() }

    /// Removes the bytes of `r`, splitting ranges it cuts through.
    public mutating func remove(_ r: Range<Int64>) {
        guard !r.isEmpty else { return }
        ranges = ranges.flatMap { x -> [Range<Int64>] in
            guard x.overlaps(r) else { return [x] }
            var kept: [Range<Int64>] = []
            if x.lowerBound < r.lowerBound { kept.append(x.lowerBound..<r.lowerBound) }
            if x.upperBound > r.upperBound { kept.append(r.upperBound..<x.upperBound) }
            return kept
        }
    }

    /// Keeps only what lies below `size` (the item shrank).
    public mutating func clamp(to size: Int64) {
        ranges = ranges.compactMap { r in
            r.lowerBound >= size ? nil : r.lowerBound..<min(r.upperBound, size)
        }
    }

    /// True when every byte of `r` is present (an empty range is always present).
    public func contains(_ r: Range<Int64>) -> Bool {
        guard !r.isEmpty else { return true }
        let i = firstIndex(endingAtOrAfter: r.lowerBound + 1)
        return i < ranges.count && ranges[i].lowerBound <= r.lowerBound && ranges[i].upperBound >= r.upperBound
    }

    /// The parts of `r` not present, in order.
    public func missing(in r: Range<Int64>) -> [Range<Int64>] {
        guard !r.isEmpty else { return [] }
        var out: [Range<Int64>] = []
        var cursor = r.lowerBound
        var i = firstIndex(endingAtOrAfter: cursor + 1)
        while cursor < r.upperBound {
            if i < ranges.count && ranges[i].lowerBound <= cursor {
                cursor = ranges[i].upperBound
                i += 1
                continue
            }
            let next = i < ranges.count ? min(ranges[i].lowerBound, r.upperBound) : r.upperBound
            if next > cursor { out.append(cursor..<next) }
            cursor = next
        }
        return out
    }

    /// Binary search: the first range with upperBound >= x.
    private func firstIndex(endingAtOrAfter x: Int64) -> Int {
        var lo = 0, hi = ranges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ranges[mid].upperBound < x { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    // MARK: persistence

    public var description: String { ranges.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ",") }

    /// Parses the persisted form; nil when it is malformed (the cache entry is then discarded).
    public init?(persisted: String) {
        guard !persisted.isEmpty else { return }
        for part in persisted.split(separator: ",") {
            let ends = part.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2, let lo = Int64(ends[0]), let hi = Int64(ends[1]), lo >= 0, lo <= hi else { return nil }
            insert(lo..<hi)
        }
    }
}
