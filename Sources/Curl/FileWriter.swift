import Foundation

/// Where a download's body goes in a file: bytes gathered into larger `pwrite`s. libcurl hands
/// the body over in pieces of at most 16 KiB (CURL_MAX_WRITE_SIZE) whatever its buffer size, and
/// a syscall, a file-time update and a progress report per 16 KiB cost the one transfer thread
/// more than the copy into this buffer does. The first bytes go out at once (a reader waits for
/// them); the gathering threshold then doubles with what was written, up to `capacity`.
final class FileWriter {
    let fd: Int32
    /// File offset of the first body byte.
    let start: Int64
    /// Bytes in the file so far (what progress and the result report).
    private(set) var flushed: Int64 = 0
    private var buffer: UnsafeMutableRawPointer?
    private var count = 0
    static let capacity = 256 << 10
    static let first = 16 << 10

    init(fd: Int32, start: Int64) { self.fd = fd; self.start = start }

    deinit { buffer?.deallocate() }

    /// Takes `chunk`; returns an errno when writing failed (nothing more is accepted then).
    func write(_ chunk: UnsafeRawBufferPointer) -> Int32? {
        guard chunk.count > 0 else { return nil }
        if count + chunk.count > Self.capacity, let e = flush() { return e }
        if count == 0 && chunk.count >= threshold { return pwriteAll(chunk.baseAddress!, chunk.count) }
        if buffer == nil { buffer = .allocate(byteCount: Self.capacity, alignment: 4096) }
        memcpy(buffer! + count, chunk.baseAddress!, chunk.count)
        count += chunk.count
        return count >= threshold ? flush() : nil
    }

    /// Writes what is gathered; returns an errno when that failed.
    func flush() -> Int32? {
        guard count > 0, let buffer else { return nil }
        let n = count
        count = 0
        return pwriteAll(buffer, n)
    }

    private var threshold: Int { min(Self.capacity, max(Self.first, Int(flushed))) }

    private func pwriteAll(_ p: UnsafeRawPointer, _ n: Int) -> Int32? {
        var done = 0
        while done < n {
            let w = pwrite(fd, p + done, n - done, off_t(start + flushed))
            if w < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if w == 0 { return EIO }
            done += w
            flushed += Int64(w)
        }
        return nil
    }
}
