import Foundation
import GRDB
import XCTest
@testable import FavFSCore
import Providers

/// SQLite's single writer can be busy for a second (a listing of 100,000 entries being saved,
/// another process's checkpoint): no FUSE request may wait for it through `Domain.lock`.
final class StoreOutsideTheLockTests: XCTestCase {
    private static func write(_ d: Domain, _ h: UInt64, _ offset: Int64, _ data: Data) throws {
        _ = try data.withUnsafeBytes { try d.write(handle: h, offset: offset, $0) }
    }

    private func served(_ f: LocalFixture, _ path: String) -> Data? {
        try? Data(contentsOf: f.served.appendingPathComponent(path))
    }

    func testLookupsDoNotWaitForSQLiteWhileAnUploadIsRecordedAndAWriteMeanwhileIsKept() async throws {
        let f = try LocalFixture()
        try f.write("doc.txt", Data("original".utf8))
        try f.write("other/x.txt", Data("x".utf8))
        var o = DomainOptions()
        o.fsyncWaitsForRemote = true
        let d = try f.makeDomain(options: o)
        _ = try await d.connect()
        _ = try await d.children(of: .rootContainer)
        await d.waitForListingSaves()
        let id = ItemIdentifier("/doc.txt")
        let (h, _) = try await d.openFile(id, write: true, truncate: false)
        try Self.write(d, h, 0, Data("FIRST".utf8))
        f.provider.uploadDelay = 500_000_000
        let sync = Task { try await d.sync(handle: h) }
        // The upload is under way (its delay): the store's writer is taken from now on.
        try await Task.sleep(nanoseconds: 200_000_000)
        let writer = try HeldWriter(f.cacheDir.appendingPathComponent("placeholders.sqlite").path)
        for _ in 0..<200 where served(f, "doc.txt") != Data("FIRSTnal".utf8) {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTAssertEqual(served(f, "doc.txt"), Data("FIRSTnal".utf8), "uploaded; its commit now waits for SQLite's writer")
        try await Task.sleep(nanoseconds: 200_000_000)

        // Lookups, attributes and a listing of a folder never loaded answer meanwhile.
        let started = Date()
        XCTAssertEqual(d.cachedItem(id)?.size, 8)
        _ = try await d.lookup(.rootContainer, "doc.txt")
        let listed = try await d.children(of: ItemIdentifier("/other")).map(\.name)
        XCTAssertEqual(listed, ["x.txt"])
        let waited = Date().timeIntervalSince(started)
        XCTAssertLessThan(waited, 2, "a lookup waited \(waited) s for SQLite's writer")

        // A write landing while the commit waits: it saves a row of its own (and so waits for
        // the writer itself, not holding any lock), and is uploaded after.
        let secondWritten = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            do { try Self.write(d, h, 0, Data("SECOND".utf8)) } catch { XCTFail("the write failed: \(error)") }
            secondWritten.signal()
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        writer.release()
        secondWritten.wait()
        try await sync.value
        f.provider.uploadDelay = 0
        d.closeFile(h)
        try await d.waitForUpload(id)
        XCTAssertEqual(served(f, "doc.txt"), Data("SECONDal".utf8))
        XCTAssertEqual(try d.store.journalEntries(), [])
        let names = try FileManager.default.contentsOfDirectory(atPath: f.served.path)
        XCTAssertEqual(names.sorted(), ["doc.txt", "other"], "no conflict copy of our own upload")
    }

    /// The store half of the rule: the row a change saves during a commit has a `since` the
    /// commit's delete does not match, whichever of the two lands first.
    func testARowSavedDuringACommitOutlivesTheCommitsDelete() throws {
        let f = try LocalFixture()
        let store = try PlaceholderStore(path: f.cacheDir.appendingPathComponent("p.sqlite").path)
        let id = ItemIdentifier("/a.txt")
        let item = Item(identifier: id, kind: .file, size: 3, version: "v2")
        var set = DirtySet()
        let first = JournalEntry(id: id, baseVersion: "v1", isNew: false, since: 100)
        try store.saveJournal(first)
        set.recorded(first, isNew: false)
        XCTAssertTrue(set.claimUpload(id))
        guard let begun = set.beginCommit(id, generation: 0, version: "v2") else { return XCTFail("claimed") }
        guard case .dirty(let row?) = set.changing(id) else { return XCTFail("a row to save") }
        // The change's row first, then the commit.
        try store.saveJournal(row)
        try store.commitUpload(item, contentVersion: "v2", journalSince: begun.journal.since)
        XCTAssertEqual(try store.journalEntries().map(\.baseVersion), ["v2"])
        // The commit first, then the change's row.
        try store.deleteJournal(id)
        try store.saveJournal(first)
        try store.commitUpload(item, contentVersion: "v2", journalSince: begun.journal.since)
        XCTAssertEqual(try store.journalEntries(), [])
        try store.saveJournal(row)
        XCTAssertEqual(try store.journalEntries().map(\.since), [row.since])
        store.close()
    }
    /// Opens and closes take the content cache's lock: an open whose record is saved while
    /// SQLite's writer is busy must not hold up the opens and closes of other files.
    func testAnOpenWaitingToRecordItsFileDoesNotHoldUpOtherFiles() async throws {
        let f = try LocalFixture()
        try f.write("cached.bin", randomData(100_000, seed: 1))
        try f.write("other.bin", randomData(1000, seed: 2))
        let d = try f.makeDomain()
        _ = try await d.connect()
        _ = try await d.children(of: .rootContainer)
        await d.waitForListingSaves()
        let cached = ItemIdentifier("/cached.bin")
        let (r, _) = try d.openFile(cached)
        _ = try await d.read(handle: r, offset: 0, size: 100_000)
        d.closeFile(r)
        for _ in 0..<500 where (try? d.store.contentRecord(cached))?.ranges.count != 100_000 {
            try await Task.sleep(nanoseconds: 10_000_000)
        }

        let writer = try HeldWriter(f.cacheDir.appendingPathComponent("placeholders.sqlite").path)
        // Reopened, its record is saved (when it was last used): that waits for the writer.
        let firstOpen = DispatchSemaphore(value: 0)
        let opened = Date()
        Thread {
            if let (h, _) = try? d.openFile(cached) { d.closeFile(h) }
            firstOpen.signal()
        }.start()
        try await Task.sleep(nanoseconds: 300_000_000)
        let started = Date()
        let (h, _) = try d.openFile(ItemIdentifier("/other.bin"))
        d.closeFile(h)
        let waited = Date().timeIntervalSince(started)
        XCTAssertEqual(firstOpen.wait(timeout: .now()), .timedOut, "the first open did not wait for the writer: nothing was shown")
        XCTAssertLessThan(waited, 2, "an open of another file waited \(waited) s behind a record waiting for SQLite's writer")
        writer.release()
        firstOpen.wait()
        XCTAssertLessThan(Date().timeIntervalSince(opened), 15)
        XCTAssertEqual(StoreWitness.violations.map(\.description), [])
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }

    /// A rename moves its rows and its open entries in one step under the content cache's
    /// lock: SQLite's writer is taken before that lock, so a rename waiting for the writer
    /// holds up no open or close of another file.
    func testARenameWaitingForSQLitesWriterDoesNotHoldUpOtherFiles() async throws {
        let f = try LocalFixture()
        try f.write("a.bin", randomData(50_000, seed: 3))
        try f.write("other.bin", randomData(1000, seed: 4))
        let d = try f.makeDomain()
        _ = try await d.connect()
        _ = try await d.children(of: .rootContainer)
        await d.waitForListingSaves()
        let a = ItemIdentifier("/a.bin")
        let (r, _) = try d.openFile(a)
        _ = try await d.read(handle: r, offset: 0, size: 50_000)
        d.closeFile(r)
        for _ in 0..<500 where (try? d.store.contentRecord(a))?.ranges.count != 50_000 {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        XCTAssertEqual(try d.store.contentRecord(a)?.ranges.count, 50_000, "the content is recorded")

        let writer = try HeldWriter(f.cacheDir.appendingPathComponent("placeholders.sqlite").path)
        let renamed = Task { try await d.rename(.rootContainer, "a.bin", to: .rootContainer, "b.bin", noReplace: false) }
        // The server has moved the file: the rename now waits for SQLite's writer to record it.
        for _ in 0..<500 where served(f, "b.bin") == nil { try await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertNotNil(served(f, "b.bin"), "the server moved the file")
        try await Task.sleep(nanoseconds: 300_000_000)
        let otherOpened = DispatchSemaphore(value: 0)
        let started = Date()
        Thread {
            if let (h, _) = try? d.openFile(ItemIdentifier("/other.bin")) { d.closeFile(h) }
            otherOpened.signal()
        }.start()
        let answered = otherOpened.wait(timeout: .now() + 5)
        let waited = Date().timeIntervalSince(started)
        writer.release()
        if answered == .timedOut { otherOpened.wait() }
        XCTAssertEqual(answered, .success, "an open of another file waited for the rename's SQLite write")
        XCTAssertLessThan(waited, 2, "an open of another file waited \(waited) s behind a rename waiting for SQLite's writer")
        _ = try await renamed.value
        XCTAssertNil(try d.store.contentRecord(a))
        XCTAssertEqual(try d.store.contentRecord(ItemIdentifier("/b.bin"))?.ranges.count, 50_000, "the record moved with the rename")
        let (h, _) = try d.openFile(ItemIdentifier("/b.bin"))
        let back = try await d.read(handle: h, offset: 0, size: 50_000)
        XCTAssertEqual(bytes(back), randomData(50_000, seed: 3))
        back.done?()
        d.closeFile(h)
        XCTAssertEqual(StoreWitness.violations.map(\.description), [])
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }

    /// SQLite's writer taken with a witnessed lock held is recorded (the wait would hold the
    /// lock); a write under such a lock on the writer taken before it is not.
    func testTheWitnessSeesTheWriterTakenUnderALockAndAcceptsItTakenBefore() throws {
        let f = try LocalFixture()
        let store = try PlaceholderStore(path: f.cacheDir.appendingPathComponent("w.sqlite").path)
        let content = try ContentCache(directory: f.cacheDir.appendingPathComponent("w-content"), store: store, limit: 1 << 20)
        let item = Item(identifier: ItemIdentifier("/a"), kind: .file, size: 1, version: "v1")
        StoreWitness.reset()
        try store.holdingWriter { w in
            try content.table.withLock { _ in
                try store.upsert(item)
                try w.commit()
            }
        }
        XCTAssertEqual(StoreWitness.violations.map(\.description), [], "the writer was taken first")
        XCTAssertEqual(try store.item(item.identifier)?.item.version, "v1", "committed")
        content.table.withLock { _ in _ = try? store.holdingWriter { _ in try store.upsert(item) } }
        #if DEBUG
        XCTAssertEqual(StoreWitness.violations.map(\.description), ["SQLite's writer taken by testTheWitnessSeesTheWriterTakenUnderALockAndAcceptsItTakenBefore() with ContentCache.lock held"])
        #endif
        // A body that throws leaves nothing behind.
        struct Refused: Error {}
        XCTAssertThrowsError(try store.holdingWriter { _ in
            try store.upsert(Item(identifier: ItemIdentifier("/b"), kind: .file, size: 1, version: "v1"))
            throw Refused()
        })
        XCTAssertNil(try store.item(ItemIdentifier("/b")))
        StoreWitness.reset()
        store.close()
    }

    /// `preload` keeps a folder read only if no write that may change placeholders ended
    /// meanwhile: content records, journal rows and pins do not count (a busy download made it
    /// give up and read under `Domain.lock`), placeholders do, on the held writer too.
    func testOnlyWritesThatMayChangePlaceholdersCountForPreload() throws {
        let f = try LocalFixture()
        let store = try PlaceholderStore(path: f.cacheDir.appendingPathComponent("c.sqlite").path)
        let id = ItemIdentifier("/a")
        let item = Item(identifier: id, kind: .file, size: 1, version: "v1")
        var count = store.placeholderWrites
        try store.saveContent(ContentRecord(id: id, file: "1", version: "v1", size: 1, ranges: ByteRangeSet(), lastUsed: 0, pinned: false))
        try store.saveJournal(JournalEntry(id: id, baseVersion: nil, isNew: true, since: 1))
        try store.deleteJournal(id)
        try store.addPin(id)
        try store.deleteContent(id)
        XCTAssertEqual(store.placeholderWrites, count, "writes that change no placeholder")
        try store.upsert(item)
        XCTAssertEqual(store.placeholderWrites, count + 1)
        count = store.placeholderWrites
        try store.holdingWriter { _ in try store.deleteJournal(id) }
        XCTAssertEqual(store.placeholderWrites, count, "a held writer's transaction without placeholders")
        try store.holdingWriter { w in
            try store.upsert(item)
            try w.commit()
            XCTAssertEqual(store.placeholderWrites, count + 1, "counted at the commit")
        }
        XCTAssertEqual(store.placeholderWrites, count + 1, "counted once")
        store.close()
    }

    /// The witness checks the content cache's lock for writes; reads under it are fine.
    func testTheWitnessSeesAStoreWriteUnderTheContentCachesLock() throws {
        let f = try LocalFixture()
        let store = try PlaceholderStore(path: f.cacheDir.appendingPathComponent("w.sqlite").path)
        let content = try ContentCache(directory: f.cacheDir.appendingPathComponent("w-content"), store: store, limit: 1 << 20)
        StoreWitness.reset()
        content.table.withLock { _ in _ = try? store.contentRecord(ItemIdentifier("/a")) }
        XCTAssertEqual(StoreWitness.violations.count, 0, "a read under ContentCache.lock is fine")
        content.table.withLock { _ in try? store.deleteContent(ItemIdentifier("/a")) }
        #if DEBUG
        XCTAssertEqual(StoreWitness.violations.map(\.description), ["PlaceholderStore.deleteContent(_:) with ContentCache.lock held"])
        #endif
        StoreWitness.reset()
        store.close()
    }
}
