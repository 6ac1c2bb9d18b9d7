import Foundation
import XCTest
import FavFSCore
import Providers

/// The local provider's reads copy the served file into the cache file in the kernel
/// (copy_file_range) where it can, and through a buffer where the two are on different file
/// systems that refuse it: either way the bytes land at their own offsets, and only the range
/// asked for.
final class LocalProviderReadTests: XCTestCase {
    private func bytes(_ n: Int, seed: UInt64) -> Data {
        var state = seed
        var d = Data(count: n)
        d.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
            for i in 0..<n {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                raw[i] = UInt8(truncatingIfNeeded: state >> 33)
            }
        }
        return d
    }

    /// Reads `ranges` of a file of `size` bytes into a cache file in `cacheFolder` and checks
    /// each range's bytes, and that nothing else was written.
    private func check(cacheFolder: String, size: Int, ranges: [Range<Int64>]) async throws {
        let served = FileManager.default.temporaryDirectory.appendingPathComponent("favfs-local-read-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: served) }
        let data = bytes(size, seed: UInt64(size))
        try data.write(to: served.appendingPathComponent("f.bin"))
        let provider = LocalProvider(root: served.path)
        let item = try await provider.item(for: ItemIdentifier("/f.bin"))
        for range in ranges {
            let cachePath = cacheFolder + "/favfs-local-read-cache-\(UUID().uuidString.prefix(8))"
            let fd = open(cachePath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            XCTAssertGreaterThanOrEqual(fd, 0)
            defer { close(fd); unlink(cachePath) }
            let got = try await provider.readContents(of: item, range: range, into: ContentSink(fd: fd))
            let end = min(range.upperBound, Int64(size))
            XCTAssertEqual(got, range.lowerBound..<end, "range \(range)")
            var st = stat()
            XCTAssertEqual(fstat(fd, &st), 0)
            XCTAssertEqual(Int64(st.st_size), end, "bytes written past the range \(range)")
            var back = Data(count: Int(end - range.lowerBound))
            let n = back.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(range.lowerBound)) }
            XCTAssertEqual(n, back.count)
            XCTAssertTrue(back == data[Int(range.lowerBound)..<Int(end)], "other bytes than the served file's in \(range)")
        }
    }

    /// More than one step of the copy (`FileCopy.step`), a range inside, and one past the end.
    private var ranges: [Range<Int64>] { [0..<Int64(9 << 20) + 4097, 5000..<70_001, Int64(9 << 20)..<Int64(10 << 20)] }

    func testReadsIntoACacheFileOnTheSameFileSystem() async throws {
        try await check(cacheFolder: FileManager.default.temporaryDirectory.path, size: (9 << 20) + 4097, ranges: ranges)
    }

    func testReadsIntoACacheFileOnAnotherFileSystem() async throws {
        // /dev/shm is a tmpfs on Linux: another file system than the temporary folder's disk.
        var a = stat(), b = stat()
        guard stat("/dev/shm", &a) == 0, stat(FileManager.default.temporaryDirectory.path, &b) == 0, a.st_dev != b.st_dev else {
            throw XCTSkip("no tmpfs at /dev/shm beside the temporary folder's file system")
        }
        try await check(cacheFolder: "/dev/shm", size: (9 << 20) + 4097, ranges: ranges)
    }
}
