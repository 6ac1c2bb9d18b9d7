import XCTest
@testable import FavFSCore
import Providers

/// What the store records about cached content matches what is on disk once the reads are
/// over: a file read to the end through many concurrent downloads is `materialized`, not the
/// older snapshot of one download whose save happened to land last.
final class ContentRecordTests: XCTestCase {
    func testAFileReadToTheEndIsRecordedWhole() async throws {
        // Several rounds: the lost-update needed two downloads' saves to finish out of order.
        for round in 0..<10 {
            let f = try LocalFixture()
            let size = 24 << 20
            try f.write("big.bin", randomData(size, seed: UInt64(round)))
            f.provider.delay = UInt64(round % 3) * 2_000_000
            let d = try f.makeDomain()
            let id = ItemIdentifier("/big.bin")
            _ = try await d.children(of: .rootContainer)
            let (h, _) = try d.openFile(id)
            // Eight readers at once, each through its own slice: many downloads end close
            // together, and each ends with a save of the entry's record.
            let slice = Int64(size / 8)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for k in 0..<8 {
                    group.addTask {
                        var offset = Int64(k) * slice
                        while offset < Int64(k + 1) * slice {
                            let r = try await d.read(handle: h, offset: offset, size: 128 << 10)
                            guard r.length == 128 << 10 else { throw ProviderError(.invalidResponse, path: "/big.bin", detail: "short read at \(offset)") }
                            offset += Int64(r.length)
                        }
                    }
                }
                try await group.waitForAll()
            }
            d.closeFile(h)
            // Background downloads may still be finishing: once none is in flight and their
            // saves have had a second, the store's record is what the next session sees.
            let deadline = Date().addingTimeInterval(30)
            while d.transferProgress(of: id) != nil && Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
            try await Task.sleep(nanoseconds: 1_000_000_000)
            let store = try PlaceholderStore(path: f.cacheDir.appendingPathComponent("placeholders.sqlite").path)
            let record = try store.contentRecord(id)
            XCTAssertEqual(record?.ranges.count, Int64(size), "round \(round): the store records \(record.map { "\($0.ranges)" } ?? "nothing")")
            XCTAssertEqual(d.extendedAttribute(Domain.stateAttribute, of: id), "materialized", "round \(round)")
        }
    }
}

/// Bytes dropped from a cache file (a file larger than the cache disk streams) whose record
/// still names them — the record's save failed on the full disk, or a crash came between —
/// read as zeros. The file's holes say which they are, and they are downloaded again.
final class DroppedBytesRecordTests: XCTestCase {
    func testARecordNamingBytesTheCacheFileLostDoesNotServeZeros() async throws {
        let f = try LocalFixture()
        let data = randomData(1 << 20, seed: 7)
        try f.write("big.bin", data)
        let d = try f.makeDomain()
        let id = ItemIdentifier("/big.bin")
        _ = try await d.children(of: .rootContainer)
        var (h, _) = try d.openFile(id)
        var read = try await d.read(handle: h, offset: 0, size: data.count)
        XCTAssertEqual(bytes(read), data)
        read.done?()
        d.closeFile(h)

        // What a drop leaves when its record is not saved: the record names the whole file,
        // the file holds a hole (here: all of it).
        // Recorded by the download once it ended, which may be after the read's reply, and
        // the entry gone from memory (the download held it): the next open reads the record.
        let store = try PlaceholderStore(path: f.cacheDir.appendingPathComponent("placeholders.sqlite").path)
        let deadline = Date().addingTimeInterval(30)
        while ((try store.contentRecord(id))?.ranges.count != Int64(data.count) || d.content.table.withLock({ $0.entries[id] != nil }))
                && Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        let record = try XCTUnwrap(try store.contentRecord(id))
        XCTAssertEqual(record.ranges.count, Int64(data.count))
        let path = f.cacheDir.appendingPathComponent("content").appendingPathComponent(record.file).path
        XCTAssertEqual(truncate(path, 0), 0)
        XCTAssertEqual(truncate(path, off_t(data.count)), 0)
        let readsBefore = f.provider.reads.count

        (h, _) = try d.openFile(id)
        read = try await d.read(handle: h, offset: 0, size: data.count)
        XCTAssertEqual(bytes(read), data, "the hole was served as the file's bytes")
        read.done?()
        d.closeFile(h)
        XCTAssertGreaterThan(f.provider.reads.count, readsBefore, "the bytes were not downloaded again")
    }
}
