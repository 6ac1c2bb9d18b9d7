import Foundation
import XCTest
@testable import FavFSCore

/// A listing's changes are applied to the content cache after the listing was merged: a file
/// written or renamed here in between must keep its content.
///
/// A removal of cached content looks at the record under the cache's lock and deletes it
/// outside: a rename that moves the record in between must not leave the new name a record
/// naming the deleted file. Seen with rsync into a Dropbox mount: a listing taken after the
/// server's move said the temp name was gone while the rename was being recorded here; the
/// target's record then named a deleted cache file, and reading it gave zeros of the right size.
final class RemovalRaceTests: XCTestCase {
    /// A domain over a served folder holding `name` with `data`, read whole through it: its
    /// content is cached and recorded.
    private func domainWithCached(_ name: String, _ data: Data) async throws -> (LocalFixture, Domain) {
        let f = try LocalFixture()
        try f.write(name, data)
        let d = try f.makeDomain()
        _ = try await d.connect()
        _ = try await d.children(of: .rootContainer)
        let id = ItemIdentifier("/" + name)
        let (h, _) = try d.openFile(id)
        let read = bytes(try await d.read(handle: h, offset: 0, size: data.count))
        XCTAssertEqual(read, data)
        d.closeFile(h)
        // The record follows the read: its ranges are saved after the reply.
        for _ in 0..<500 where (try d.store.contentRecord(id))?.ranges.count != Int64(data.count) {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        XCTAssertEqual(try d.store.contentRecord(id)?.ranges.count, Int64(data.count), "the read content is recorded")
        return (f, d)
    }

    func testARenameWhileItsOldNameIsRemovedLeavesNoRecordWithoutAFile() async throws {
        let data = randomData(26_466, seed: 21)
        let (f, d) = try await domainWithCached(".f21.bin.tmp", data)
        defer { _ = f }
        let temp = ItemIdentifier("/.f21.bin.tmp"), target = ItemIdentifier("/f21.bin")

        // "Gone at the remote" for the temp name: its record is looked at and marked going...
        let file = try XCTUnwrap(d.content.beginRemoving(temp, atTheRemote: true))
        // ...the rename is recorded meanwhile...
        try d.content.move(temp, to: target) { try d.store.move(temp, to: target) }
        // ...and the removal ends (its file goes first: on a full disk that is what frees space).
        d.content.deleteGoingRecord(temp, file: file)

        XCTAssertFalse(FileManager.default.fileExists(atPath: d.content.path(file)), "the removed content's file went")
        if let moved = try d.store.contentRecord(target) {
            XCTAssertEqual(try? Data(contentsOf: URL(fileURLWithPath: d.content.path(moved.file))), data,
                           "a record of the new name names a file holding its bytes")
        }
        XCTAssertNil(try d.store.contentRecord(temp))
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }

    /// The other order: the removal ends before the rename is recorded. The record and its
    /// file go together, and the rename moves no record: the new name has no content cached
    /// (it is downloaded when read), never a record without its file.
    func testARemovalThatEndsBeforeTheRenameLeavesNoRecordWithoutAFile() async throws {
        let (f, d) = try await domainWithCached("a.tmp", randomData(10_000, seed: 3))
        defer { _ = f }
        let temp = ItemIdentifier("/a.tmp"), target = ItemIdentifier("/a")
        let file = try XCTUnwrap(d.content.beginRemoving(temp, atTheRemote: true))
        d.content.deleteGoingRecord(temp, file: file)
        try d.content.move(temp, to: target) { try d.store.move(temp, to: target) }
        XCTAssertNil(try d.store.contentRecord(target))
        XCTAssertFalse(FileManager.default.fileExists(atPath: d.content.path(file)), "the removed content's file went")
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }

    /// The listing found the name gone (or at a new version) while the file was clean; it was
    /// written and closed here before the change was applied. Its cache file is the only copy
    /// of what was written: neither "gone at the remote" nor "outdated" may drop it.
    func testContentWrittenAfterTheListingLookedIsNotDroppedByItsChanges() async throws {
        let f = try LocalFixture()
        try f.write("a.txt", Data("remote".utf8))
        try f.write("b.txt", Data("remote".utf8))
        let d = try f.makeDomain()
        _ = try await d.connect()
        _ = try await d.children(of: .rootContainer)
        f.provider.uploadDelay = 2_000_000_000
        for name in ["a.txt", "b.txt"] {
            let (h, _) = try await d.openFile(ItemIdentifier("/" + name), write: true, truncate: true)
            _ = try Data("written here: \(name)".utf8).withUnsafeBytes { try d.write(handle: h, offset: 0, $0) }
            d.closeFile(h)
        }
        // What the listing's changes do, after its look at what was dirty.
        d.content.remove(ItemIdentifier("/a.txt"), atTheRemote: true)
        d.content.dropOutdated(ItemIdentifier("/b.txt"), version: "another version")
        for name in ["a.txt", "b.txt"] {
            let id = ItemIdentifier("/" + name)
            let (h, _) = try d.openFile(id)
            let read = bytes(try await d.read(handle: h, offset: 0, size: 100))
            d.closeFile(h)
            XCTAssertEqual(read, Data("written here: \(name)".utf8), "\(name): what was written is read back")
            try await d.waitForUpload(id)
            XCTAssertEqual(try Data(contentsOf: f.served.appendingPathComponent(name)), Data("written here: \(name)".utf8),
                           "\(name): what was written reaches the remote")
        }
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }
}
