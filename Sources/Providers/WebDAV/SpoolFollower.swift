import Foundation

/// Reads a spool file while the download is still writing it, so a listing is parsed as it
/// arrives, not after: parsing a 5,000-entry PROPFIND (10-20 ms of CPU) overlaps the server's
/// own time producing it. Checks the bytes are UTF-8 as they go by.
final class SpoolFollower: @unchecked Sendable {
    private let fd: Int32
    private let condition = NSCondition()
    private var written: Int64 = 0
    private var ended = false
    // The reading side's own state: one reader, on one thread at a time.
    private var offset: Int64 = 0
    private var utf8 = UTF8Check.Incremental()
    /// What stopped the reading early: invalid UTF-8, or the file could not be read back.
    private(set) var failure: String?

    init(fd: Int32) { self.fd = fd }

    /// The download has written up to `end` (called on the transfer thread: never blocks long).
    func grew(to end: Int64) {
        condition.lock()
        if end > written { written = end; condition.signal() }
        condition.unlock()
    }

    /// The download is over, however it ended: what the file holds is all there will be.
    func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    /// The next chunk of the body, waiting for the download to write it; nil at the end, and
    /// at the first problem (`failure` says which).
    func next() -> Data? {
        while true {
            condition.lock()
            while written <= offset && !ended { condition.wait() }
            var available = written - offset
            let done = ended
            condition.unlock()
            if done {
                // The last write may not have been reported: the file's size says what is left.
                var info = stat()
                if fstat(fd, &info) == 0 { available = Int64(info.st_size) - offset }
                if available <= 0 {
                    if !utf8.isComplete { failure = "the body is not valid UTF-8" }
                    return nil
                }
            }
            // No larger than what is there: most PROPFINDs (one item) are a few hundred bytes,
            // and zeroing a large buffer for each cost more than reading them.
            var chunk = Data(count: Int(min(Self.chunkSize, available)))
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            if n < 0 {
                if errno == EINTR { continue }
                failure = "cannot read the spooled response back: \(String(cString: strerror(errno)))"
                return nil
            }
            if n == 0 {
                if !utf8.isComplete { failure = "the body is not valid UTF-8" }
                return nil
            }
            offset += Int64(n)
            chunk.count = n
            guard chunk.withUnsafeBytes({ utf8.feed($0) }) else {
                failure = "the body is not valid UTF-8"
                return nil
            }
            return chunk
        }
    }

    /// The most handed to the parser at once.
    static let chunkSize: Int64 = 256 << 10
}
