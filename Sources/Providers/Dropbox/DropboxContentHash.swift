import FavFSCore
import Foundation

/// Dropbox's `content_hash` of a file: the SHA-256 of the concatenated SHA-256 digests of its
/// 4 MiB blocks (Dropbox's "Content hash" reference). Sent with an upload, Dropbox writes
/// nothing whose bytes do not hash to it; returned with every file's metadata, it lets a
/// download be checked too.
enum DropboxContentHash {
    static let blockSize = 4 * 1024 * 1024

    /// Of the first `length` bytes of `fd` (read with `pread`); nil when they cannot be read.
    static func of(fd: Int32, length: Int64) -> String? {
        var whole = SHA256.Hasher()
        var buffer = [UInt8](repeating: 0, count: blockSize)
        var offset: Int64 = 0
        while offset < length {
            let want = Int(min(Int64(blockSize), length - offset))
            var got = 0
            while got < want {
                let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, want - got, off_t(offset) + off_t(got)) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return nil }
                got += n
            }
            var block = SHA256.Hasher()
            buffer.withUnsafeBytes { block.update(UnsafeRawBufferPointer(rebasing: $0.prefix(want))) }
            whole.update(block.finalize())
            offset += Int64(want)
        }
        return whole.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
