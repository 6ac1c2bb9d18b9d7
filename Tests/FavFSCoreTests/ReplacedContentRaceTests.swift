import Foundation
import XCTest
@testable import FavFSCore

/// A name whose content changed under an open: a file renamed onto it (its changes not yet
/// uploaded) between an open's look at the item and its `retain`, or while a read-ahead had
/// made an entry for the name. The changes made here must survive both.
final class ReplacedContentRaceTests: XCTestCase {
    private func cache(_ f: LocalFixture) throws -> (PlaceholderStore, ContentCache) {
        let store = try PlaceholderStore(path: f.cacheDir.appendingPathComponent("r.sqlite").path)
        let content = try ContentCache(directory: f.cacheDir.appendingPathComponent("r-content"), store: store, limit: 1 << 30)
        return (store, content)
    }

    /// A file written here at `id` (its journal row, record and cache file), closed.
    private func dirtyFile(_ content: ContentCache, _ store: PlaceholderStore, _ id: ItemIdentifier, _ data: Data) throws -> String {
        let item = Item(identifier: id, kind: .file, size: 0, modified: 1)
        let e = try content.retain(item: item, version: "here", asHandle: true, local: true)
        _ = try data.withUnsafeBytes { try e.write(at: 0, $0) }
        try store.saveJournal(JournalEntry(id: id, baseVersion: nil, isNew: true, since: 1))
        content.persist(e)
        content.release(e, asHandle: true)
        return e.file
    }

    private func fileBytes(_ content: ContentCache, _ file: String) -> Data? {
        FileManager.default.contents(atPath: content.directory.appendingPathComponent(file).path)
    }

    /// An unlink deletes the content record in one store transaction with the journal row and
    /// the placeholder (`removeInHeldTransaction`). Until that commits, other threads still
    /// read the record, which names the unlinked cache file: a file created at the name
    /// meanwhile must not take it (its content would sit in a file whose record the commit
    /// then deletes). The mark that says so (`recordsGoing`) holds until `endRemoving`.
    func testAFileCreatedWhileAnUnlinkCommitsGetsACacheFileOfItsOwn() throws {
        let f = try LocalFixture()
        let (store, content) = try cache(f)
        defer { store.close() }
        let id = ItemIdentifier("/journal")
        let old = try dirtyFile(content, store, id, Data("the deleted file".utf8))
        let created = Item(identifier: id, kind: .file, size: 0, modified: 2)
        let opened = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var entry: ContentEntry?
        var done = false
        try store.holdingWriter { _ in
            XCTAssertTrue(content.removeInHeldTransaction(id))
            // Another thread, as a FUSE create is: it reads the store outside this transaction.
            Thread.detachNewThread {
                entry = try? content.retain(item: created, version: "here", asHandle: true, local: true)
                opened.signal()
            }
            // It may wait for the writer (a record save) once it chose its file: not here.
            done = opened.wait(timeout: .now() + 2) == .success
        }
        content.endRemoving(id)
        if !done { opened.wait() }
        let e = try XCTUnwrap(entry)
        XCTAssertNotEqual(e.file, old, "a file created during the unlink's transaction took the deleted file's cache file")
        content.release(e, asHandle: true)
    }

    /// An open that read the name's item before a changed file was renamed onto it retains
    /// with the old item's version: the renamed content is what it gets, never emptied.
    func testAnOpenWithAnOutdatedItemKeepsContentChangedHere() throws {
        let f = try LocalFixture()
        let (store, content) = try cache(f)
        defer { store.close() }
        let data = Data("written here, not uploaded yet".utf8)
        let file = try dirtyFile(content, store, ItemIdentifier("/g"), data)
        let outdated = Item(identifier: ItemIdentifier("/g"), kind: .file, size: 500, modified: 0, version: "remote-1")
        let e = try content.retain(item: outdated, version: "remote-1", asHandle: true)
        XCTAssertEqual(e.file, file)
        XCTAssertEqual(fileBytes(content, file), data, "the only copy of a change was emptied for an outdated open")
        XCTAssertEqual(e.withLock { $0.size }, Int64(data.count))
        XCTAssertEqual(e.withLock { $0.version }, "here")
        content.release(e, asHandle: true)
        XCTAssertEqual(try store.contentRecord(ItemIdentifier("/g"))?.file, file)
    }

    /// An entry made for the destination after the caller removed what it knew there (a
    /// read-ahead's, an open's) is the replaced file's after the move: its record never lands
    /// over the moved one.
    func testAnEntryAtTheDestinationNeverRecordsOverTheMovedContent() throws {
        let f = try LocalFixture()
        let (store, content) = try cache(f)
        defer { store.close() }
        let data = Data("the new content".utf8)
        let moved = try dirtyFile(content, store, ItemIdentifier("/f"), data)
        let old = Item(identifier: ItemIdentifier("/g"), kind: .file, size: 4, modified: 0, version: "remote-1")
        let early = try XCTUnwrap(content.retainIfUnused(item: old, version: "remote-1"))
        try content.move(ItemIdentifier("/f"), to: ItemIdentifier("/g")) { try store.move(ItemIdentifier("/f"), to: ItemIdentifier("/g")) }
        // The early entry's download lands afterwards and records what it fetched.
        _ = Data("old!".utf8).withUnsafeBytes { pwrite(early.fd, $0.baseAddress, 4, 0) }
        early.withLock { es in es.ranges.insert(0..<4); es.recorded = true }
        try early.saveRecord(to: store)
        content.release(early, asHandle: false)
        let record = try XCTUnwrap(try store.contentRecord(ItemIdentifier("/g")))
        XCTAssertEqual(record.file, moved, "the moved content's record was replaced by an entry made before the move")
        XCTAssertEqual(fileBytes(content, moved), data)
        XCTAssertTrue(try store.hasJournal(ItemIdentifier("/g")))
    }

    /// Read-ahead never makes an entry for content changed here.
    func testReadAheadLeavesContentChangedHereAlone() throws {
        let f = try LocalFixture()
        let (store, content) = try cache(f)
        defer { store.close() }
        _ = try dirtyFile(content, store, ItemIdentifier("/g"), Data("mine".utf8))
        let outdated = Item(identifier: ItemIdentifier("/g"), kind: .file, size: 9, modified: 0, version: "remote-1")
        XCTAssertNil(content.retainIfUnused(item: outdated, version: "remote-1"))
    }

    /// A read of the replaced version, in flight when the rename lands, fails as changed: the
    /// record it drops is its own, never the one the rename brought to the name.
    func testAReadOfTheReplacedVersionFailingKeepsTheMovedRecord() async throws {
        let f = try LocalFixture()
        try f.write("g", Data("remote".utf8))
        let (store, content) = try cache(f)
        defer { store.close() }
        let downloads = Downloads(cache: content, eviction: Eviction(cache: content, pins: PinSet([])))
        // The item as an earlier listing saw it: the served file is another version now.
        let old = Item(identifier: ItemIdentifier("/g"), kind: .file, size: 6, modified: 0, version: "an-older-version")
        let early = try XCTUnwrap(content.retainIfUnused(item: old, version: "an-older-version"))
        let provider = f.provider
        provider.delay = 300_000_000
        let read = Task { try await downloads.provide(early, item: old, range: 0..<6, prefetch: nil, provider: provider) }
        try await Task.sleep(nanoseconds: 50_000_000)
        let data = Data("saved here".utf8)
        let moved = try dirtyFile(content, store, ItemIdentifier("/f"), data)
        try content.move(ItemIdentifier("/f"), to: ItemIdentifier("/g")) { try store.move(ItemIdentifier("/f"), to: ItemIdentifier("/g")) }
        let failed = await read.result
        if case .success = failed { XCTFail("the read of the replaced version succeeded") }
        content.release(early, asHandle: false)
        XCTAssertEqual(try store.contentRecord(ItemIdentifier("/g"))?.file, moved, "the moved content's record was deleted")
        XCTAssertEqual(fileBytes(content, moved), data)
    }
}
