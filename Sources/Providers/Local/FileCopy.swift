import Foundation

/// Bytes copied from one file to another at the same offsets, in the kernel where it can.
enum FileCopy {
    /// The most bytes one `chunk` of a read moves (progress is counted between them).
    static let step: Int64 = 8 << 20

    /// Copies up to `max` bytes at `offset` of `input` to the same offset of `output`: with the
    /// kernel's copy_file_range (glibc has it; Swift's Glibc module does not declare it, so it is
    /// looked up once), else, where the file system refuses it, through a buffer. The count
    /// copied, 0 at the end of `input`, or -1 with errno set.
    static func chunk(_ input: Int32, _ output: Int32, at offset: Int64, max: Int) -> Int {
        if let copyFileRange {
            var inOff = offset, outOff = offset
            let n = copyFileRange(input, &inOff, output, &outOff, max, 0)
            if n >= 0 || ![EXDEV, ENOSYS, EOPNOTSUPP, EINVAL].contains(errno) { return n }
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.min(max, 1 << 20), alignment: 16)
        defer { buffer.deallocate() }
        let n = pread(input, buffer.baseAddress, buffer.count, off_t(offset))
        guard n > 0 else { return n }
        var written = 0
        while written < n {
            let w = pwrite(output, buffer.baseAddress! + written, n - written, off_t(offset) + off_t(written))
            if w < 0 { if errno == EINTR { continue }; return -1 }
            written += w
        }
        return n
    }

    private typealias CopyFileRange = @convention(c) (Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int, UInt32) -> Int
    private static let copyFileRange: CopyFileRange? =
        dlsym(nil, "copy_file_range").map { unsafeBitCast($0, to: CopyFileRange.self) }
}
