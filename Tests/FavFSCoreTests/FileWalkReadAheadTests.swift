import Foundation
import XCTest
@testable import FavFSCore

/// Read-ahead across files (`FileWalkReadAhead`): a program reading a folder's files one after
/// another in name order finds the next ones fetched; a program that does not walk, and content
/// that is changed here or too large, gets nothing fetched for it.
final class FileWalkReadAheadTests: XCTestCase {
    /// Opens `name` in the root, reads `count` bytes from the start (all of it when nil), closes.
    private func read(_ d: Domain, _ name: String, count: Int? = nil) async throws -> Data {
        let (h, _) = try d.openFile(ItemIdentifier("/" + name))
        defer { d.closeFile(h) }
        var out = Data()
        let size = Int(d.openSize(handle: h) ?? 0)
        let want = min(count ?? size, size)
        while out.count < want {
            let r = try await d.read(handle: h, offset: Int64(out.count), size: min(128 << 10, want - out.count))
            out += bytes(r)
            r.done?()
        }
        return out
    }

    private func reads(_ f: LocalFixture, _ name: String) -> Int { f.provider.reads.filter { $0.0 == "/" + name }.count }

    private func waitUntilMaterialized(_ d: Domain, _ names: [String]) async throws {
        let deadline = Date().addingTimeInterval(10)
        while names.contains(where: { d.state(of: ItemIdentifier("/" + $0)) != "materialized" }), Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    func testAFolderReadInOrderHasTheNextFilesFetchedWhileEachIsRead() async throws {
        let f = try LocalFixture()
        var data: [String: Data] = [:]
        for (i, name) in ["a.bin", "b.bin", "c.bin", "e.bin", "f.bin"].enumerated() {
            data[name] = randomData(300 << 10, seed: UInt64(i))
            try f.write(name, data[name]!)
        }
        try f.write("d/inside.bin", randomData(1000))
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)

        let a = try await read(d, "a.bin")
        XCTAssertEqual(a, data["a.bin"])
        XCTAssertEqual(d.state(of: ItemIdentifier("/c.bin")), "placeholder", "one file read is not a walk")
        // b opened after a was read to its end: c and e (the folder between is skipped) are
        // fetched, two files ahead; f is not.
        let b = try await read(d, "b.bin")
        XCTAssertEqual(b, data["b.bin"])
        try await waitUntilMaterialized(d, ["c.bin", "e.bin"])
        XCTAssertEqual(d.state(of: ItemIdentifier("/c.bin")), "materialized")
        XCTAssertEqual(d.state(of: ItemIdentifier("/e.bin")), "materialized")
        XCTAssertEqual(reads(f, "f.bin"), 0, "only two files ahead")
        XCTAssertEqual(reads(f, "d/inside.bin"), 0, "nothing below a folder")
        // Read from what was fetched: no request of its own, every byte right.
        let c = try await read(d, "c.bin")
        XCTAssertEqual(c, data["c.bin"])
        XCTAssertEqual(reads(f, "c.bin"), 1, "c was fetched once, ahead of its reader")
        try await waitUntilMaterialized(d, ["f.bin"])
        let e = try await read(d, "e.bin"), last = try await read(d, "f.bin")
        XCTAssertEqual(e, data["e.bin"])
        XCTAssertEqual(last, data["f.bin"])
        XCTAssertEqual(reads(f, "e.bin"), 1)
        XCTAssertEqual(reads(f, "f.bin"), 1)
    }

    /// Reads each of 8 files of 200 KiB in name order, each provider read waiting 30 ms first
    /// (as a server's answer does: transfers that overlap show); returns the most files that
    /// were in transfer at once, after checking every file's bytes and that none was fetched
    /// twice.
    private func walk(capabilities: ProviderCapabilities) async throws -> Int {
        let f = try LocalFixture()
        f.provider.extraCapabilities = capabilities
        let names = (0..<8).map { "f\($0).bin" }
        var data: [String: Data] = [:]
        for (i, name) in names.enumerated() {
            data[name] = randomData(200 << 10, seed: UInt64(i))
            try f.write(name, data[name]!)
        }
        f.provider.delay = 30_000_000
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        for name in names {
            let got = try await read(d, name)
            XCTAssertEqual(got, data[name], name)
        }
        for name in names {
            let fetched = f.provider.reads.filter { $0.0 == "/" + name }.reduce(0) { $0 + $1.1.count }
            XCTAssertEqual(fetched, 200 << 10, "\(name): bytes fetched twice, or not at all")
        }
        return f.provider.mostFilesReadAtOnce
    }

    /// Where each connection logs in anew, a walk's files come one after another, the opened
    /// one first (its reader's reads and the walk share its transfer): one connection.
    func testAWalkFetchesOneFileAtATimeWhereConnectionsCostALogin() async throws {
        let most = try await walk(capabilities: [.connectionsCostALogin])
        XCTAssertEqual(most, 1, "files of one walk were fetched side by side")
    }

    /// Elsewhere the opened file and the two after it are fetched side by side, never more.
    func testAWalkFetchesAFewFilesSideBySideWhereConnectionsAreCheap() async throws {
        let most = try await walk(capabilities: [])
        XCTAssertGreaterThan(most, 1, "a walk over cheap connections fetched one file at a time")
        XCTAssertLessThanOrEqual(most, FileWalkReadAhead.depth + 1, "more files at once than the walk's depth and the opened one")
    }

    func testReadingOnlyTheStartOfEachFileFetchesNothingAhead() async throws {
        let f = try LocalFixture()
        for (i, name) in ["a.bin", "b.bin", "c.bin", "d.bin"].enumerated() { try f.write(name, randomData(2 << 20, seed: UInt64(i))) }
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        for name in ["a.bin", "b.bin", "c.bin"] { _ = try await read(d, name, count: 4096) }
        try await Task.sleep(nanoseconds: 300_000_000)
        XCTAssertEqual(reads(f, "d.bin"), 0, "a program reading headers is not a walk")
        XCTAssertEqual(d.state(of: ItemIdentifier("/d.bin")), "placeholder")
    }

    func testNothingIsFetchedAheadForAFileChangedHereOrTooLarge() async throws {
        let f = try LocalFixture()
        let small = randomData(200 << 10, seed: 1)
        for name in ["a.bin", "b.bin", "c.bin", "e.bin"] { try f.write(name, small) }
        try f.write("d.bin", randomData(Int(FileWalkReadAhead.largestFile) + 1, seed: 2))
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        // c is open for writing and changed here: its cache file is the only copy.
        let (w, _) = try await d.openFile(ItemIdentifier("/c.bin"), write: true, truncate: true)
        let mine = Data("changed here".utf8)
        _ = try mine.withUnsafeBytes { try d.write(handle: w, offset: 0, $0) }
        _ = try await read(d, "a.bin")
        _ = try await read(d, "b.bin")
        // Ahead of b: c (changed here) and d (too large) are skipped, e is fetched.
        try await waitUntilMaterialized(d, ["e.bin"])
        XCTAssertEqual(d.state(of: ItemIdentifier("/e.bin")), "materialized")
        XCTAssertEqual(reads(f, "c.bin"), 0, "content changed here was fetched ahead")
        XCTAssertEqual(reads(f, "d.bin"), 0, "a file larger than \(FileWalkReadAhead.largestFile) bytes was fetched ahead")
        d.closeFile(w)
        try await d.waitForUpload(ItemIdentifier("/c.bin"), untilClean: true)
        XCTAssertEqual(try Data(contentsOf: f.served.appendingPathComponent("c.bin")), mine)
    }
}
