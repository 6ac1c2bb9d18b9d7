import Glibc

/// Copies a file with plain system calls. Not `FileManager.copyItem`: swift-foundation's (in
/// the Swift 6 toolchain) writes out of bounds when the destination path is longer than
/// PATH_MAX — in a daemon that corrupted the heap, and with it SQLite's page cache
/// ("database disk image is malformed") and glibc's ("munmap_chunk(): invalid pointer").
enum FileCopy {
    /// Copies `source` to a new file `destination` (mode 0600, created exclusively) and syncs
    /// it. False when it cannot (the partial copy is removed); `errno` says why.
    static func copy(from source: String, to destination: String) -> Bool {
        guard source.utf8.count < Int(PATH_MAX), destination.utf8.count < Int(PATH_MAX) else {
            errno = ENAMETOOLONG
            return false
        }
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { return false }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { return false }
        var ok = false
        defer {
            close(output)
            if !ok { unlink(destination) }
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; return false }
            if n == 0 { break }
            var written = 0
            while written < n {
                let w = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, n - written) }
                if w < 0 { if errno == EINTR { continue }; return false }
                written += w
            }
        }
        guard fsync(output) == 0 else { return false }
        ok = true
        return true
    }
}
