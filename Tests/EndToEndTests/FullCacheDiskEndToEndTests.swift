import Foundation
import TestSupport
import Synchronization
import XCTest

/// A cache disk that fills up: a 12 MiB tmpfs as the cache dir, with `--cache-size` far above
/// it. Reads evict least recently used content when the disk is full and go on; a file larger
/// than the whole disk streams (what its reader passed is dropped), and the mount stays usable.
final class FullCacheDiskEndToEndTests: XCTestCase {
    func testAFullCacheDiskEvictsAndTheMountStaysUsable() throws {
        try onASmallCacheDisk { m, files, apache in
            let log = { (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? "" }
            XCTAssertTrue(log().contains("is more than the cache disk holds"), "no warning about --cache-size at mount")

            // Three rounds over 16 MiB of files on a 12 MiB disk: each read must evict to succeed.
            for round in 0..<3 {
                for i in 0..<4 {
                    let name = "f\(i).bin"
                    XCTAssertEqual(FileManager.default.contents(atPath: m.path + "/" + name), files[name], "round \(round): \(name)")
                }
            }
            // Evicted, or (content of other files still in use by their read-ahead on a loaded
            // machine: nothing to evict yet) streamed: either way the log says the disk was full.
            XCTAssertTrue(log().contains("the cache disk is full: "), "no full cache disk was logged")

            // Larger than the whole disk: it streams, dropping what the reader has passed.
            for round in 0..<2 {
                // Not from the kernel's page cache: every round reads through favfs.
                let got = Self.readUncached(m.path + "/huge.bin")
                XCTAssertEqual(got, files["huge.bin"], "round \(round): a 16 MiB file read through a 12 MiB cache disk: "
                               + "\(Self.differs(got, files["huge.bin"]!))\n\(m.logTail())")
            }
            XCTAssertTrue(log().contains("streams; dropped"), "no streaming was logged")
            XCTAssertTrue(m.isMounted)
            XCTAssertEqual(FileManager.default.contents(atPath: m.path + "/f2.bin"), files["f2.bin"], "the mount is not usable after ENOSPC")
            // Writing still works too (the upload streams from the cache file).
            XCTAssertNil(TwoWritersEndToEndTests.rewrite(m.path + "/note.txt", with: "still fine\n", create: true))
            XCTAssertTrue(try m.unmount().succeeded)
            XCTAssertEqual(try String(contentsOf: apache.documentRoot.appendingPathComponent("note.txt"), encoding: .utf8), "still fine\n")
        }
    }

    /// What a user does with a big file on a small disk, none of it from the kernel's page
    /// cache: two programs reading it at once, one starting in the middle and then reading it
    /// all, rounds after one another, then a remount keeping the cache. Each read used to be
    /// able to fail with ENOSPC (the disk held the file's own bytes from an earlier read, which
    /// nothing dropped), and a record saved before a drop served the dropped bytes as zeros.
    func testAFileLargerThanTheDiskReadEveryWayGivesItsBytes() throws {
        try onASmallCacheDisk { m, files, _ in
            let huge = m.path + "/huge.bin", expected = files["huge.bin"]!
            for round in 0..<8 {
                _ = Self.readUncached(m.path + "/f\(round % 4).bin")
                switch round % 3 {
                case 0:
                    let results = Self.concurrently(2) { _ in Self.readUncached(huge) }
                    for (k, got) in results.enumerated() {
                        XCTAssertEqual(got, expected, "round \(round), reader \(k) of two: \(Self.differs(got, expected))\n\(m.logTail())")
                    }
                case 1:
                    let tail = Self.readUncached(huge, from: Int64(round + 6) << 20)
                    XCTAssertEqual(tail, expected.suffix(from: (round + 6) << 20), "round \(round): from the middle\n\(m.logTail())")
                    let got = Self.readUncached(huge)
                    XCTAssertEqual(got, expected, "round \(round): after a read from the middle: \(Self.differs(got, expected))\n\(m.logTail())")
                default:
                    let got = Self.readUncached(huge)
                    XCTAssertEqual(got, expected, "round \(round): \(Self.differs(got, expected))\n\(m.logTail())")
                }
            }
            XCTAssertTrue(try m.unmount(keepCache: true).succeeded)
            try m.mountOrThrow(extraArgs: ["--cache-size", "1G"])
            let got = Self.readUncached(huge)
            XCTAssertEqual(got, expected, "after a remount keeping the cache: \(Self.differs(got, expected))\n\(m.logTail())")
            XCTAssertTrue(try m.unmount().succeeded)
        }
    }

    /// Runs `body` with a mount of Apache serving four 4 MiB files and one of 16 MiB, its
    /// cache dir on a 12 MiB tmpfs (`--cache-size` far above it).
    private func onASmallCacheDisk(_ body: (MountedFavFS, [String: Data], ApacheServer) throws -> Void) throws {
        try E2EGate.require(apache: true)
        guard getuid() == 0 else { throw XCTSkip("mounting a tmpfs needs root") }
        let apache = try ApacheServer()
        defer { apache.remove() }
        var files: [String: Data] = [:]
        for i in 0..<4 {
            files["f\(i).bin"] = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* (i + 3) &+ $0 >> 13) })
        }
        files["huge.bin"] = Data((0..<(16 << 20)).map { UInt8(truncatingIfNeeded: $0 >> 7 &+ $0 >> 17) })
        for (name, data) in files { try data.write(to: apache.documentRoot.appendingPathComponent(name)) }
        try apache.start()
        let disk = URL(fileURLWithPath: "/tmp/favfs-tmpfs-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        let mounted = try TimedProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=12m", "tmpfs", disk.path], timeout: 30)
        guard mounted.succeeded else { throw XCTSkip("cannot mount a tmpfs here: \(mounted)") }
        defer {
            _ = try? TimedProcess.run("/bin/umount", ["-l", disk.path], timeout: 30)
            try? FileManager.default.removeItem(at: disk)
        }
        let m = try MountedFavFS(remote: apache.davURL, cacheDir: disk.appendingPathComponent("cache"))
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--cache-size", "1G"])
        try body(m, files, apache)
    }

    /// The file's bytes from `offset` on, its pages first dropped from the kernel's cache so
    /// that every byte is asked of favfs; nil when a read fails.
    static func readUncached(_ path: String, from offset: Int64 = 0) -> Data? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
        var out = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var at = offset
        while true {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(at)) }
            if n < 0 { return nil }
            if n == 0 { return out }
            out.append(contentsOf: buffer[0..<n])
            at += Int64(n)
        }
    }

    /// Runs `body` on `n` threads at once; its results in order.
    static func concurrently<T: Sendable>(_ n: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
        let results = Mutex<[Int: T]>([:])
        DispatchQueue.concurrentPerform(iterations: n) { k in
            let r = body(k)
            results.withLock { $0[k] = r }
        }
        return results.withLock { d in (0..<n).map { d[$0]! } }
    }

    /// Where `got` first differs from `expected`, in words.
    static func differs(_ got: Data?, _ expected: Data) -> String {
        guard let got else { return "the read failed" }
        if got.count != expected.count { return "\(got.count) bytes instead of \(expected.count)" }
        guard let at = zip(got, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset else { return "same" }
        return "first different byte at \(at): \(got[at]) instead of \(expected[at])"
    }
}
