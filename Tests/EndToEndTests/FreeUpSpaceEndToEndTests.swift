import Foundation
import TestSupport
import XCTest

/// `favfs evict` (Free up space) on a WebDAV mount of the release binary: downloaded content
/// goes and downloads again when read, names and sizes stay, a pin below goes first and is
/// said, a file open for writing stays and is named with exit status 75.
final class FreeUpSpaceEndToEndTests: XCTestCase {
    func testEvictFreesContentKeepsNamesAndSaysWhatItKept() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        func random(_ n: Int, _ seed: Int) -> Data { Data((0..<n).map { UInt8(truncatingIfNeeded: ($0 &* 2654435761 &+ seed) >> 7) }) }
        let files = ["v/a.bin": random(2 << 20, 1), "v/b.bin": random(500_000, 2), "v/p/c.bin": random(300_000, 3)]
        try apache.write(files)
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow()

        for (path, data) in files { XCTAssertEqual(FileManager.default.contents(atPath: m.path + "/" + path), data, path) }
        // Recorded in the cache dir just after the reads: what freeing finds.
        XCTAssertTrue(waitUntil(30) { ["v/a.bin", "v/b.bin", "v/p/c.bin"].allSatisfy { self.state(m, $0) == "materialized" } })
        XCTAssertTrue(try TimedProcess.run(FavFSBinary.path, ["pin", m.path + "/v/p"], timeout: 60).succeeded)
        XCTAssertEqual(state(m, "v/p/c.bin"), "materialized, pinned")

        // b.bin open for writing: kept, named, exit status 75; the rest is freed.
        let writer = try XCTUnwrap(FileHandle(forUpdatingAtPath: m.path + "/v/b.bin"))
        let busy = try TimedProcess.run(FavFSBinary.path, ["evict", m.path + "/v"], timeout: 120)
        try writer.close()
        XCTAssertEqual(busy.status, 75, "\(busy)")
        XCTAssertTrue(busy.stderr.contains("kept \(m.path)/v/b.bin: open"), busy.stderr)
        XCTAssertTrue(busy.stdout.contains("unpinned \(m.path)/v/p"), busy.stdout)
        XCTAssertTrue(busy.stdout.contains("freed 2 files, "), busy.stdout)
        XCTAssertEqual(state(m, "v/a.bin"), "placeholder")
        XCTAssertEqual(state(m, "v/p/c.bin"), "placeholder", "the pin went first")
        XCTAssertEqual(try Python.getxattr(m.path + "/v/a.bin", "user.favfs.state"), "placeholder")
        let attributes = try FileManager.default.attributesOfItem(atPath: m.path + "/v/a.bin")
        XCTAssertEqual((attributes[.size] as? NSNumber)?.intValue, 2 << 20, "the name and size stay")

        // Closed now: freed on the next try. Then everything reads back byte-exact.
        let again = try TimedProcess.run(FavFSBinary.path, ["evict", m.path + "/v/b.bin"], timeout: 120)
        XCTAssertTrue(again.succeeded, "\(again)")
        XCTAssertTrue(again.stdout.contains("freed 1 file, "), again.stdout)
        XCTAssertEqual(state(m, "v/b.bin"), "placeholder")
        for (path, data) in files { XCTAssertEqual(FileManager.default.contents(atPath: m.path + "/" + path), data, "\(path) read again") }

        let outside = try TimedProcess.run(FavFSBinary.path, ["evict", "/tmp"], timeout: 30)
        XCTAssertEqual(outside.status, 64, "\(outside)")
        XCTAssertTrue(outside.stderr.contains("is not inside a favfs mount"), outside.stderr)
        XCTAssertTrue(try m.unmount().succeeded)
    }

    private func state(_ m: MountedFavFS, _ path: String) -> String? {
        guard let r = try? TimedProcess.run(FavFSBinary.path, ["status", m.path + "/" + path], timeout: 30), r.succeeded else { return nil }
        return r.stdout.split(separator: "\t").first.map(String.init)?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
