import Foundation
import TestSupport
import XCTest

/// A cache disk that fills up: a 12 MiB tmpfs as the cache dir, with `--cache-size` far above
/// it. Reads evict least recently used content when the disk is full and go on; a file larger
/// than the whole disk streams (what its reader passed is dropped), and the mount stays usable.
final class FullCacheDiskEndToEndTests: XCTestCase {
    func testAFullCacheDiskEvictsAndTheMountStaysUsable() throws {
        try E2EGate.require(apache: true)
        guard getuid() == 0 else { throw XCTSkip("mounting a tmpfs needs root") }
        let apache = try ApacheServer()
        var files: [String: Data] = [:]
        for i in 0..<4 {
            files["f\(i).bin"] = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* (i + 3) &+ $0 >> 13) })
        }
        files["huge.bin"] = Data((0..<(16 << 20)).map { UInt8(truncatingIfNeeded: $0 >> 7) })
        for (name, data) in files { try data.write(to: apache.documentRoot.appendingPathComponent(name)) }
        try apache.start()
        defer { apache.remove() }

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
            XCTAssertEqual(FileManager.default.contents(atPath: m.path + "/huge.bin"), files["huge.bin"],
                           "round \(round): a 16 MiB file read through a 12 MiB cache disk")
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
