import Foundation

/// One open handle of a file: the content entry it reads and its read-ahead state. A reader
/// that keeps reading where it stopped gets a window that quadruples up to the maximum; a seek
/// resets it, so random reads fetch only their own chunks.
final class OpenFile: @unchecked Sendable {
    let item: Item
    let entry: ContentEntry
    /// Opened for writing: writes go to the cache file; the last release uploads.
    let writable: Bool
    /// The source of the server-side copy this handle's file was made by (`ServerSideCopy.copyRange`):
    /// the kernel's later requests for the rest of that copy are answered as done.
    let copiedFrom: ItemIdentifier?
    private let lock = NSLock()
    private var lastEnd: Int64 = 0
    private var window: Int64 = 0
    private var prefetchedTo: Int64 = 0
    private var randomReads = 0
    private var fillRequested = false
    /// Whether a reply was served through this handle, or the handle moved on to a newer
    /// version (`retireIfUnserved`): a handle moves only while it has served nothing, so a
    /// program never gets bytes of two versions through one descriptor.
    private var serving: Serving = .nothingYet
    private enum Serving { case nothingYet, served, retired }

    /// After this many reads that were not sequential, the reader is a random reader of the
    /// whole file: fetching all of it in the background beats a round trip per read.
    static let randomReadsBeforeFill = 32

    init(item: Item, entry: ContentEntry, writable: Bool = false, copiedFrom: ItemIdentifier? = nil) {
        self.item = item; self.entry = entry; self.writable = writable; self.copiedFrom = copiedFrom
    }

    /// Records a read of `r` and returns what to prefetch after it, if anything.
    func readAhead(after r: Range<Int64>, maxWindow: Int64, minWindow: Int64) -> Range<Int64>? {
        lock.lock(); defer { lock.unlock() }
        // The kernel issues reads asynchronously and slightly out of order: near counts as sequential.
        let slack: Int64 = 256 << 10
        let sequential = r.lowerBound >= lastEnd - slack && r.lowerBound <= lastEnd + slack
        if sequential {
            // Quadrupling: a sniffer's one read costs `minWindow`, a reader that goes on
            // reaches the full window after five reads.
            window = min(max(window * 4, minWindow), maxWindow)
        } else {
            window = 0
            prefetchedTo = 0
            randomReads += 1
        }
        lastEnd = max(r.upperBound, sequential ? lastEnd : 0)
        guard window > 0 else { return nil }
        let from = max(prefetchedTo, r.upperBound)
        // Top up when less than half the window is ahead of the reader.
        guard from < r.upperBound + window / 2 else { return nil }
        let to = min(r.upperBound + window, entry.withLock { es in es.size })
        guard from < to else { return nil }
        prefetchedTo = to
        return from..<to
    }

    /// Called before a reply is served from this handle's entry; false when the handle has
    /// moved to a newer version meanwhile (the caller then asks the table for the handle again).
    func startServing() -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard serving != .retired else { return false }
        serving = .served
        return true
    }

    /// True (and the handle retired for good) when nothing was served through it yet.
    func retireIfUnserved() -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard serving == .nothingYet else { return false }
        serving = .retired
        return true
    }

    /// True once, when this handle's random reads call for fetching the whole file.
    func wantsFill() -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard !fillRequested, randomReads >= Self.randomReadsBeforeFill else { return false }
        fillRequested = true
        return true
    }
}
