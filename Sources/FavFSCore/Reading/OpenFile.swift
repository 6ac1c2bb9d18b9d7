import Foundation

/// One open handle of a file: the content entry it reads and its read-ahead state. A reader
/// that keeps reading where it stopped gets a window that quadruples up to the maximum; a seek
/// resets it, so random reads fetch only their own chunks.
final class OpenFile: Sendable {
    let item: Item
    let entry: ContentEntry
    /// Opened for writing: writes go to the cache file; the last release uploads.
    let writable: Bool
    /// The source of the server-side copy this handle's file was made by (`ServerSideCopy.copyRange`):
    /// the kernel's later requests for the rest of that copy are answered as done.
    let copiedFrom: ItemIdentifier?
    /// The read-ahead state and whether anything was served (`OpenFile.lock`; takes only
    /// `ContentEntry.lock` inside it).
    private let state = Guarded("OpenFile.lock", State())

    private struct State {
        var lastEnd: Int64 = 0
        var window: Int64 = 0
        var prefetchedTo: Int64 = 0
        var randomReads = 0
        var fillRequested = false
        /// Whether a reply was served through this handle, or the handle moved on to a newer
        /// version (`retireIfUnserved`): a handle moves only while it has served nothing, so a
        /// program never gets bytes of two versions through one descriptor.
        var serving: Serving = .nothingYet
    }
    private enum Serving { case nothingYet, served, retired }

    /// After this many reads that were not sequential, the reader is a random reader of the
    /// whole file: fetching all of it in the background beats a round trip per read.
    static let randomReadsBeforeFill = 32

    init(item: Item, entry: ContentEntry, writable: Bool = false, copiedFrom: ItemIdentifier? = nil) {
        self.item = item; self.entry = entry; self.writable = writable; self.copiedFrom = copiedFrom
    }

    /// Records a read of `r` and returns what to prefetch after it, if anything.
    func readAhead(after r: Range<Int64>, maxWindow: Int64, minWindow: Int64) -> Range<Int64>? {
        state.withLock { s in
            // The kernel issues reads asynchronously and slightly out of order: near counts as sequential.
            let slack: Int64 = 256 << 10
            let sequential = r.lowerBound >= s.lastEnd - slack && r.lowerBound <= s.lastEnd + slack
            if sequential {
                // Quadrupling: a sniffer's one read costs `minWindow`, a reader that goes on
                // reaches the full window after five reads.
                s.window = min(max(s.window * 4, minWindow), maxWindow)
            } else {
                s.window = 0
                s.prefetchedTo = 0
                s.randomReads += 1
            }
            s.lastEnd = max(r.upperBound, sequential ? s.lastEnd : 0)
            guard s.window > 0 else { return nil }
            let from = max(s.prefetchedTo, r.upperBound)
            // Top up when less than half the window is ahead of the reader.
            guard from < r.upperBound + s.window / 2 else { return nil }
            let to = min(r.upperBound + s.window, entry.withLock { es in es.size })
            guard from < to else { return nil }
            s.prefetchedTo = to
            return from..<to
        }
    }

    /// Called before a reply is served from this handle's entry; false when the handle has
    /// moved to a newer version meanwhile (the caller then asks the table for the handle again).
    func startServing() -> Bool {
        state.withLock { s in
            guard s.serving != .retired else { return false }
            s.serving = .served
            return true
        }
    }

    /// True (and the handle retired for good) when nothing was served through it yet.
    func retireIfUnserved() -> Bool {
        state.withLock { s in
            guard s.serving == .nothingYet else { return false }
            s.serving = .retired
            return true
        }
    }

    /// True once, when this handle's random reads call for fetching the whole file.
    func wantsFill() -> Bool {
        state.withLock { s in
            guard !s.fillRequested, s.randomReads >= Self.randomReadsBeforeFill else { return false }
            s.fillRequested = true
            return true
        }
    }
}
