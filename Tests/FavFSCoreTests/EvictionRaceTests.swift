import Foundation
import XCTest
@testable import FavFSCore

/// An eviction pass reads the content records once and then evicts from that list: a file
/// written and closed while the pass runs is dirty by the time the pass reaches it, and its
/// cache file is then the only copy of what was written.
final class EvictionRaceTests: XCTestCase {
    func testAPassWhoseRecordsPredateAWriteKeepsTheWrittenFile() async throws {
        let f = try LocalFixture()
        try f.write("a.bin", randomData(200_000, seed: 1))
        let d = try f.makeDomain()
        _ = try await d.connect()
        _ = try await d.children(of: .rootContainer)
        let id = ItemIdentifier("/a.bin")
        let (r, _) = try d.openFile(id)
        _ = try await d.read(handle: r, offset: 0, size: 200_000)
        d.closeFile(r)
        // The pass's list, read while the file was clean.
        // (The record follows the read: its ranges are saved after the reply.)
        var records: [ContentRecord] = []
        for _ in 0..<500 where records.isEmpty {
            records = try d.store.contentByLastUse().filter { $0.id == id && $0.ranges.count == 200_000 }
            if records.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        }
        XCTAssertEqual(records.count, 1)

        f.provider.uploadDelay = 1_000_000_000
        let (h, _) = try await d.openFile(id, write: true, truncate: false)
        _ = try Data("WRITTEN HERE".utf8).withUnsafeBytes { try d.write(handle: h, offset: 0, $0) }
        d.closeFile(h)

        // The pass reaches the file now: dirty, not in use.
        for rec in records { XCTAssertFalse(d.eviction.evict(rec), "the only copy of a write was evicted") }
        var expected = randomData(200_000, seed: 1)
        expected.replaceSubrange(0..<12, with: Data("WRITTEN HERE".utf8))
        let (h2, _) = try d.openFile(id)
        let read = bytes(try await d.read(handle: h2, offset: 0, size: 200_000))
        d.closeFile(h2)
        XCTAssertEqual(read, expected, "the write must be read back")
        try await d.waitForUpload(id)
        XCTAssertEqual(try Data(contentsOf: f.served.appendingPathComponent("a.bin")), expected, "the write must reach the remote")
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }
}
