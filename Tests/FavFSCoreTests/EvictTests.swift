import XCTest
import FavFSCore

/// Free up space (`favfs evict`): cached content goes, placeholders stay; pins below go first;
/// the only copy of a change and content in use stay, each with why.
final class EvictTests: XCTestCase {
    private func readAll(_ d: Domain, _ path: String) async throws -> Data {
        let id = ItemIdentifier(path)
        let (h, _) = try d.openFile(id)
        defer { d.closeFile(h) }
        let size = Int(d.cachedItem(id)?.size ?? 0)
        return bytes(try await d.read(handle: h, offset: 0, size: size))
    }

    private func cacheFiles(_ d: Domain) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: d.content.directory.path)) ?? []).count
    }

    func testFreesContentBelowAFolderKeepingPlaceholdersTheOnlyCopyAndWhatIsOpen() async throws {
        let f = try LocalFixture()
        let files = ["d/a.bin": randomData(300_000, seed: 1), "d/b.bin": randomData(1000, seed: 2),
                     "d/sub/c.bin": randomData(70_000, seed: 3), "top.bin": randomData(5000, seed: 4)]
        for (path, data) in files { try f.write(path, data) }
        let d = try f.makeDomain()
        _ = try await d.connect()
        for path in files.keys.sorted() {
            let parent = ItemIdentifier("/" + path).parent!
            _ = try await d.lookup(parent, ItemIdentifier("/" + path).name)
            let read = try await readAll(d, "/" + path)
            XCTAssertEqual(read, files[path])
        }
        XCTAssertEqual(d.state(of: ItemIdentifier("/d/a.bin")), "materialized")
        try await d.setPinned(ItemIdentifier("/d/sub"), true)
        // The pin's background pass holds c.bin while it checks it (in use: it would be kept).
        for _ in 0..<1000 {
            let p = d.pinStatus()
            if p.downloadFilesDone + p.downloadFailures >= p.downloadFilesQueued { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        // Open: kept. Changed here, its upload not done: kept (the only copy).
        let (open, _) = try d.openFile(ItemIdentifier("/d/b.bin"))
        f.provider.uploadDelay = 120_000_000_000
        let (_, h) = try await d.create(ItemIdentifier("/d"), "new.txt", exclusive: true)
        _ = try Data("only here".utf8).withUnsafeBytes { try d.write(handle: h, offset: 0, $0) }
        d.closeFile(h)

        let report = try await d.evict(ItemIdentifier("/d"))
        XCTAssertEqual(report.files, 2, "\(report)")
        XCTAssertEqual(report.bytes, 370_000)
        XCTAssertEqual(report.unpinned, [ItemIdentifier("/d/sub")])
        XCTAssertEqual(report.kept.map(\.id.rawValue).sorted(), ["/d/b.bin", "/d/new.txt"])
        XCTAssertTrue(report.kept.first { $0.id.rawValue == "/d/new.txt" }?.reason.contains("not uploaded") == true)
        XCTAssertFalse(d.isPinned(ItemIdentifier("/d/sub/c.bin")))
        XCTAssertEqual(d.state(of: ItemIdentifier("/d/a.bin")), "placeholder")
        XCTAssertEqual(d.state(of: ItemIdentifier("/d/sub/c.bin")), "placeholder")
        XCTAssertEqual(d.state(of: ItemIdentifier("/top.bin")), "materialized", "outside the folder")
        XCTAssertEqual(d.cachedItem(ItemIdentifier("/d/a.bin"))?.size, 300_000, "the placeholder stays")
        d.closeFile(open)
        // The only copy is whole; a freed file downloads again.
        let kept = try await readAll(d, "/d/new.txt")
        XCTAssertEqual(kept, Data("only here".utf8))
        let again = try await readAll(d, "/d/a.bin")
        XCTAssertEqual(again, files["d/a.bin"])
        // Its cache record is written off the reader's path: freeing finds what is recorded.
        for _ in 0..<500 where (try? d.store.contentRecord(ItemIdentifier("/d/a.bin")))?.ranges.count != 300_000 {
            try await Task.sleep(nanoseconds: 10_000_000)
        }

        // One file; then everything that is left.
        let one = try await d.evict(ItemIdentifier("/top.bin"))
        XCTAssertEqual(one.files, 1)
        XCTAssertEqual(d.state(of: ItemIdentifier("/top.bin")), "placeholder")
        let rest = try await d.evict(.rootContainer)
        XCTAssertEqual(rest.files, 2, "a.bin read again, b.bin closed now: \(rest)")
        XCTAssertEqual(rest.kept.map(\.id.rawValue), ["/d/new.txt"])
        XCTAssertEqual(cacheFiles(d), 1, "only the file not uploaded is left on disk")

        // Pinned through a folder above: refused, with what to do instead.
        try await d.setPinned(ItemIdentifier("/d"), true)
        do { _ = try await d.evict(ItemIdentifier("/d/a.bin")); XCTFail("evicted a file pinned through its folder") }
        catch let e as ProviderError { XCTAssertTrue(e.detail.contains("pinned through /d"), e.detail) }
        do { _ = try await d.evict(ItemIdentifier("/d/nothing")); XCTFail("an absent item") }
        catch let e as ProviderError { XCTAssertEqual(e.kind, .notFound) }
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }

    /// `favfs status`: pinned downloads count a large file's bytes as they arrive; the cache
    /// line counts what counts against the cache size, not pinned content.
    func testPinProgressCountsBytesAsTheyArriveAndTheCacheLineLeavesPinsOut() async throws {
        let f = try LocalFixture()
        try f.write("p/big.bin", randomData(6 << 20, seed: 5))
        try f.write("loose.bin", randomData(1000, seed: 6))
        let d = try f.makeDomain()
        _ = try await d.connect()
        _ = try await d.lookup(.rootContainer, "loose.bin")
        _ = try await readAll(d, "/loose.bin")
        _ = try await d.lookup(ItemIdentifier("/p"), "big.bin")
        // The first 2 MiB request answers at once, the next ones after 10 s.
        f.provider.delayFrom = 2 << 20
        f.provider.delay = 10_000_000_000
        try await d.setPinned(ItemIdentifier("/p"), true)
        var s = d.pinStatus()
        for _ in 0..<800 where s.downloadBytesDone < 2 << 20 {
            try await Task.sleep(nanoseconds: 10_000_000)
            s = d.pinStatus()
        }
        XCTAssertEqual(s.downloadFilesDone, 0, "\(s)")
        XCTAssertGreaterThanOrEqual(s.downloadBytesDone, 2 << 20, "the first bytes of the file in progress count: \(s)")
        XCTAssertEqual(s.downloadBytesQueued, 6 << 20)
        for _ in 0..<3000 where d.pinStatus().downloadFilesDone < 1 { try await Task.sleep(nanoseconds: 10_000_000) }
        s = d.pinStatus()
        XCTAssertEqual(s.downloadBytesDone, 6 << 20)
        XCTAssertEqual(s.bytes, 6 << 20)
        let status = d.status()
        XCTAssertEqual(status.cachedFiles, 1, "only loose.bin counts against the cache size")
        XCTAssertEqual(status.cachedBytes, 1000)
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }

    /// A file just read is recorded off the read's path: with SQLite's writer busy (a large
    /// listing being saved), its record lands after the read returned. Freeing it then found no
    /// record, freed nothing and said nothing; it waits for the record now.
    func testFreeingAFileJustReadWaitsForItsRecord() async throws {
        let f = try LocalFixture()
        let data = randomData(300_000, seed: 9)
        try f.write("a.bin", data)
        let d = try f.makeDomain()
        _ = try await d.connect()
        let id = ItemIdentifier("/a.bin")
        _ = try await d.lookup(.rootContainer, "a.bin")
        let writer = try HeldWriter(f.cacheDir.appendingPathComponent("placeholders.sqlite").path)
        let read = try await readAll(d, "/a.bin")
        XCTAssertEqual(read, data)
        XCTAssertNil(try d.store.contentRecord(id), "recorded already: the writer was not held")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { writer.release() }
        let report = try await d.evict(id)
        XCTAssertEqual(report.files, 1, "\(report)")
        XCTAssertEqual(report.bytes, Int64(data.count))
        XCTAssertEqual(d.state(of: id), "placeholder")
    }
}
