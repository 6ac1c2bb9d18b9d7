import XCTest
import FavFSCore
import Providers

final class WriteBackTests: XCTestCase {
    private func write(_ d: Domain, _ h: UInt64, _ offset: Int64, _ data: Data) throws {
        _ = try data.withUnsafeBytes { try d.write(handle: h, offset: offset, $0) }
    }

    private func served(_ f: LocalFixture, _ path: String) -> Data? {
        try? Data(contentsOf: f.served.appendingPathComponent(path))
    }

    func testANewFileIsUploadedOnCloseAndTheJournalEmpties() async throws {
        let f = try LocalFixture()
        let d = try f.makeDomain()
        _ = try await d.connect()
        let (item, h) = try await d.create(.rootContainer, "n.txt", exclusive: true)
        XCTAssertEqual(item.size, 0)
        try write(d, h, 0, Data("hello ".utf8))
        try write(d, h, 6, Data("world".utf8))
        XCTAssertEqual(d.cachedItem(ItemIdentifier("/n.txt"))?.size, 11)
        XCTAssertEqual(try d.store.journalEntries().map(\.id), [ItemIdentifier("/n.txt")], "journal row before close")
        d.closeFile(h)
        try await d.waitForUpload(ItemIdentifier("/n.txt"))
        XCTAssertEqual(served(f, "n.txt"), Data("hello world".utf8))
        XCTAssertEqual(try d.store.journalEntries(), [])
        XCTAssertEqual(d.state(of: ItemIdentifier("/n.txt")), "materialized")
        // Exclusive create of an existing name fails.
        do { _ = try await d.create(.rootContainer, "n.txt", exclusive: true); XCTFail() }
        catch let e as ProviderError { XCTAssertEqual(e.kind, .exists) }
    }

    /// sqlite's rollback journal: made, written, fsynced, closed and deleted at every commit.
    /// The close's upload waits `uploadCloseGrace`, so the delete comes first and the server is
    /// asked nothing (an upload started at the close made the delete wait for it, then delete
    /// the file at the server). A file closed and kept is sent after the grace.
    func testAFileClosedAndDeletedAtOnceIsNeverSent() async throws {
        let f = try LocalFixture()
        let d = try f.makeDomain()
        _ = try await d.connect()
        for commit in 0..<20 {
            let (_, h) = try await d.create(.rootContainer, "db-journal", exclusive: true)
            try write(d, h, 0, Data("pages of commit \(commit)".utf8))
            try await d.sync(handle: h)
            d.closeFile(h)
            try await d.remove(.rootContainer, "db-journal")
        }
        let (_, h) = try await d.create(.rootContainer, "kept", exclusive: true)
        try write(d, h, 0, Data("kept".utf8))
        d.closeFile(h)
        try await d.waitForUpload(ItemIdentifier("/kept"))
        XCTAssertEqual(served(f, "kept"), Data("kept".utf8))
        XCTAssertEqual(f.provider.changesAsked, ["upload /kept"])
        XCTAssertNil(served(f, "db-journal"))
        XCTAssertEqual(try d.store.journalEntries(), [])
        _ = d.shutdown(keepContent: true)
    }

    /// A file changed and closed while its folder is being renamed at the server: its close's
    /// grace ends after the rename, and the upload goes under the name the file has then (the
    /// old name is gone: nothing would send it until the unmount).
    func testAFileClosedDuringItsFoldersRenameIsSentUnderTheNewName() async throws {
        let f = try LocalFixture()
        try f.write("f/x.txt", Data("old".utf8))
        var o = DomainOptions()
        o.uploadCloseGrace = 1
        let d = try f.makeDomain(options: o)
        _ = try await d.children(of: .rootContainer)
        _ = try await d.children(of: ItemIdentifier("/f"))
        f.provider.moveDelay = 500_000_000
        let rename = Task { try await d.rename(.rootContainer, "f", to: .rootContainer, "g", noReplace: false) }
        try await Task.sleep(nanoseconds: 150_000_000)  // the rename's move is at the server now
        let (h, _) = try await d.openFile(ItemIdentifier("/f/x.txt"), write: true, truncate: true)
        try write(d, h, 0, Data("written during the rename".utf8))
        d.closeFile(h)
        _ = try await rename.value
        let target = f.served.appendingPathComponent("g/x.txt")
        for _ in 0..<500 where (try? Data(contentsOf: target)) != Data("written during the rename".utf8) {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        XCTAssertEqual(served(f, "g/x.txt"), Data("written during the rename".utf8), "not sent after the rename")
        XCTAssertEqual(try d.store.journalEntries(), [])
        _ = d.shutdown(keepContent: true)
    }

    /// A file closed just before the unmount is sent by it, its grace not waited out.
    func testAFileClosedAsTheUnmountBeginsIsSent() async throws {
        let f = try LocalFixture()
        var o = DomainOptions()
        o.uploadCloseGrace = 120
        let d = try f.makeDomain(options: o)
        _ = try await d.connect()
        let (_, h) = try await d.create(.rootContainer, "last.txt", exclusive: true)
        try write(d, h, 0, Data("last words".utf8))
        d.closeFile(h)
        let started = Date()
        let failed = await d.drainUploads { _, _ in }
        XCTAssertEqual(failed.count, 0)
        XCTAssertLessThan(Date().timeIntervalSince(started), 60, "sent at once, not after the grace")
        XCTAssertEqual(served(f, "last.txt"), Data("last words".utf8))
        let left = await d.stopBackgroundWork(within: 20)
        XCTAssertEqual(left, 0, "the grace's wait ends with the unmount")
        _ = d.shutdown(keepContent: true)
    }

    func testARemoteChangeUnderALocalEditMakesAConflictCopyAndKeepsTheRemote() async throws {
        let f = try LocalFixture()
        try f.write("doc.txt", Data("original".utf8))
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        let (h, _) = try await d.openFile(ItemIdentifier("/doc.txt"), write: true, truncate: false)
        try write(d, h, 0, Data("LOCAL!!!".utf8))
        try f.write("doc.txt", Data("remote edit".utf8)) // someone else saved meanwhile
        d.closeFile(h)
        try await d.waitForUpload(ItemIdentifier("/doc.txt"))
        XCTAssertEqual(served(f, "doc.txt"), Data("remote edit".utf8), "the remote version must keep its name")
        let names = try FileManager.default.contentsOfDirectory(atPath: f.served.path)
        let copy = names.first { $0.hasPrefix("doc (conflict ") && $0.hasSuffix(").txt") }
        XCTAssertNotNil(copy, "no conflict copy in \(names)")
        if let copy { XCTAssertEqual(served(f, copy), Data("LOCAL!!!".utf8)) }
        XCTAssertEqual(try d.store.journalEntries(), [])
    }

    /// A clean file open for writing, deleted at the remote and its name made a folder: writes
    /// and truncation through the handle stay with the descriptor (nothing to bring back at a
    /// folder's name), and nothing is uploaded or journalled.
    func testWritesThroughAHandleWhoseNameBecameAFolderStayWithTheDescriptor() async throws {
        let f = try LocalFixture()
        try f.write("doc.txt", Data("original".utf8))
        let d = try f.makeDomain(dirCacheTime: 0)
        _ = try await d.children(of: .rootContainer)
        let id = ItemIdentifier("/doc.txt")
        let (h, _) = try await d.openFile(id, write: true, truncate: false)
        try FileManager.default.removeItem(at: f.served.appendingPathComponent("doc.txt"))
        try f.write("doc.txt/inside", Data("other client".utf8))
        // The listing revalidates in the background (dirCacheTime 0): wait for it.
        for _ in 0..<500 where d.cachedItem(id)?.kind != .folder {
            _ = try await d.children(of: .rootContainer)
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTAssertEqual(d.cachedItem(id)?.kind, .folder)
        try write(d, h, 0, Data("LOCAL".utf8))
        _ = try await d.setSize(id, 3, handle: h)
        XCTAssertEqual(try d.store.journalEntries(), [], "nothing to upload at a folder's name")
        d.closeFile(h)
        let problems = await d.drainUploads { _, _ in }
        XCTAssertEqual(problems.map(\.description), [])
        XCTAssertEqual(served(f, "doc.txt/inside"), Data("other client".utf8))
        XCTAssertEqual(d.cachedItem(id)?.kind, .folder)
    }

    func testDirtyContentSurvivesACrashAndIsUploadedByTheNextMount() async throws {
        let f = try LocalFixture()
        let payload = randomData(3 << 20, seed: 9)
        do {
            let d = try f.makeDomain()
            _ = try await d.connect()
            let (_, h) = try await d.create(.rootContainer, "big.bin", exclusive: true)
            try write(d, h, 0, payload)
            // No close: the process dies here. The journal row and cache file remain.
            _ = h
        }
        XCTAssertNil(served(f, "big.bin"))
        let d2 = try f.makeDomain()
        _ = try await d2.connect()
        d2.resumeUploads()
        try await d2.waitForUpload(ItemIdentifier("/big.bin"))
        XCTAssertEqual(served(f, "big.bin"), payload)
        // Dirty content is never evicted, uploaded content is.
        XCTAssertEqual(try d2.store.journalEntries(), [])
    }

    /// Another client deletes a folder holding a file being written here: the folder and the
    /// file stay in view (listings of its parent and of the folder itself), and the upload
    /// at close makes the folder again.
    func testAFolderGoneAtTheRemoteStaysWhileItHoldsChanges() async throws {
        let f = try LocalFixture()
        try FileManager.default.createDirectory(at: f.served.appendingPathComponent("e"), withIntermediateDirectories: true)
        let d = try f.makeDomain(dirCacheTime: 0)
        _ = try await d.connect()
        _ = try await d.children(of: .rootContainer)
        let (_, h) = try await d.create(ItemIdentifier("/e"), "d.txt", exclusive: true)
        try write(d, h, 0, Data("mine".utf8))
        try FileManager.default.removeItem(at: f.served.appendingPathComponent("e"))
        // Listings (stale at once: dirCacheTime 0) of the root and of the folder.
        for _ in 0..<3 {
            _ = try? await d.children(of: .rootContainer)
            _ = try? await d.children(of: ItemIdentifier("/e"))
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        let root = try await d.children(of: .rootContainer).map(\.name)
        let inside = try await d.children(of: ItemIdentifier("/e")).map(\.name)
        XCTAssertEqual(root, ["e"])
        XCTAssertEqual(inside, ["d.txt"])
        d.closeFile(h)
        try await d.waitForUpload(ItemIdentifier("/e/d.txt"))
        XCTAssertEqual(served(f, "e/d.txt"), Data("mine".utf8))
    }

    func testRenameUploadsPendingChangesFirstThenMoves() async throws {
        let f = try LocalFixture()
        let d = try f.makeDomain()
        _ = try await d.connect()
        _ = try await d.makeFolder(.rootContainer, "dir")
        let (_, h) = try await d.create(ItemIdentifier("/dir"), ".tmp-save", exclusive: true)
        try write(d, h, 0, Data("saved by rename".utf8))
        d.closeFile(h)
        _ = try await d.rename(ItemIdentifier("/dir"), ".tmp-save", to: .rootContainer, "final.txt", noReplace: false)
        XCTAssertEqual(served(f, "final.txt"), Data("saved by rename".utf8))
        XCTAssertNil(served(f, "dir/.tmp-save"))
        XCTAssertEqual(d.cachedItem(ItemIdentifier("/final.txt"))?.size, 15)
        XCTAssertNil(d.cachedItem(ItemIdentifier("/dir/.tmp-save")))
        // A folder rename carries its content.
        _ = try await d.rename(.rootContainer, "dir", to: .rootContainer, "dir2", noReplace: false)
        var isDir: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: f.served.appendingPathComponent("dir2").path, isDirectory: &isDir) && isDir.boolValue)
        do { _ = try await d.rename(.rootContainer, "final.txt", to: .rootContainer, "dir2", noReplace: false); XCTFail() }
        catch let e as ProviderError { XCTAssertEqual(e.kind, .isAFolder) } // rename(2): EISDIR
    }

    func testDeletingANeverUploadedFileTouchesNothingRemote() async throws {
        let f = try LocalFixture()
        let d = try f.makeDomain()
        _ = try await d.connect()
        let (_, h) = try await d.create(.rootContainer, "scratch", exclusive: true)
        try write(d, h, 0, Data("x".utf8))
        try await d.remove(.rootContainer, "scratch")
        d.closeFile(h)
        try await Task.sleep(nanoseconds: 100_000_000)
        XCTAssertNil(served(f, "scratch"))
        XCTAssertEqual(try d.store.journalEntries(), [])
        let left = try await d.children(of: .rootContainer).map(\.name)
        XCTAssertEqual(left, [])
    }

    func testRmdirRefusesANonEmptyFolderAndTruncateKeepsThePrefix() async throws {
        let f = try LocalFixture()
        try f.write("full/x", Data("x".utf8))
        try f.write("t.bin", randomData(100_000))
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        do { try await d.removeFolder(.rootContainer, "full"); XCTFail() }
        catch let e as ProviderError { XCTAssertEqual(e.kind, .notEmpty) }
        _ = try await d.setSize(ItemIdentifier("/t.bin"), 1000, handle: nil)
        try await d.waitForUpload(ItemIdentifier("/t.bin"))
        XCTAssertEqual(served(f, "t.bin"), randomData(100_000).prefix(1000))
    }

    func testConflictNames() {
        let date = Date(timeIntervalSince1970: 0)
        let name = Domain.conflictNameForTests("report.final.txt", date: date)
        XCTAssertTrue(name.hasPrefix("report.final (conflict "), name)
        XCTAssertTrue(name.hasSuffix(").txt"), name)
        XCTAssertTrue(Domain.conflictNameForTests(".bashrc", date: date).hasPrefix(".bashrc (conflict "))
        XCTAssertTrue(Domain.conflictNameForTests("Makefile", date: date).hasSuffix(")"))
    }
}

/// Unmount stops the core's background work: nothing runs on after the database closes, and
/// what was stopped is kept for the next mount.
final class BackgroundWorkTests: XCTestCase {
    private func write(_ d: Domain, _ h: UInt64, _ data: Data) throws {
        _ = try data.withUnsafeBytes { try d.write(handle: h, offset: 0, $0) }
    }

    func testAnUploadRunningAtUnmountIsStoppedAndResumedByTheNextMount() async throws {
        let f = try LocalFixture()
        f.provider.uploadDelay = 120_000_000_000
        let d = try f.makeDomain()
        _ = try await d.connect()
        let id = ItemIdentifier("/n.txt")
        let (_, h) = try await d.create(.rootContainer, "n.txt", exclusive: true)
        try write(d, h, Data("kept".utf8))
        d.closeFile(h)
        for _ in 0..<500 where d.state(of: id) != "dirty: uploading" { try await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertEqual(d.state(of: id), "dirty: uploading")
        let started = Date()
        let left = await d.stopBackgroundWork(within: 20)
        XCTAssertEqual(left, 0, "the upload task ended")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "cancelled, not waited out")
        // Stopped by the unmount is not refused by the server: no lost+found copy, no refusal.
        XCTAssertEqual(try d.store.journalEntries().map(\.id), [id])
        XCTAssertNil(try d.store.journalEntries().first?.refused)
        XCTAssertTrue(d.refusedUploads().isEmpty)
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: d.content.lostAndFound.directory.path)) ?? [], [])
        // No new work starts once stopped.
        d.resumeUploads()
        XCTAssertEqual(d.state(of: id)?.hasPrefix("dirty: upload"), true)
        XCTAssertNotEqual(d.state(of: id), "dirty: uploading")
        _ = d.shutdown(keepContent: true)

        f.provider.uploadDelay = 0
        let d2 = try f.makeDomain()
        _ = try await d2.connect()
        d2.resumeUploads()
        try await d2.waitForUpload(id)
        XCTAssertEqual(try? Data(contentsOf: f.served.appendingPathComponent("n.txt")), Data("kept".utf8))
    }

    func testAQuietTimeWaitDoesNotHoldUpTheUnmount() async throws {
        let f = try LocalFixture()
        var o = DomainOptions()
        o.uploadQuietTime = 120
        let d = try f.makeDomain(options: o)
        _ = try await d.connect()
        let (_, h) = try await d.create(.rootContainer, "db", exclusive: true)
        try write(d, h, Data("page".utf8))
        try await d.sync(handle: h)  // local: the upload waits for 120 s of quiet
        let started = Date()
        let left = await d.stopBackgroundWork(within: 20)
        XCTAssertEqual(left, 0)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertEqual(try d.store.journalEntries().map(\.id), [ItemIdentifier("/db")], "kept for the next mount")
        d.closeFile(h)
        _ = d.shutdown(keepContent: true)
    }

    /// An enumeration is background work the domain owns: the unmount cancels a listing still
    /// running (a slow server) and whoever waited for it is answered, instead of the listing
    /// running on behind the database the unmount closes. No listing starts after that.
    func testTheUnmountCancelsAListingInFlight() async throws {
        let f = try LocalFixture()
        try f.write("a/x.txt", Data("x".utf8))
        let d = try f.makeDomain()
        _ = try await d.connect()
        f.provider.listingDelay = 120_000_000_000
        d.listRootAhead()
        let waiter = Task { try await d.children(of: .rootContainer) }
        for _ in 0..<500 where f.provider.enumerations(of: .rootContainer) == 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertEqual(f.provider.enumerations(of: .rootContainer), 1, "one listing, shared")
        let started = Date()
        let left = await d.stopBackgroundWork(within: 20)
        XCTAssertEqual(left, 0, "the listing ended")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "cancelled, not waited out")
        let answered = await waiter.result
        XCTAssertThrowsError(try answered.get(), "the listing was cancelled, its waiter told")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        // Once stopped, a folder asked for is not listed.
        do {
            let listed = try await d.children(of: ItemIdentifier("/a"))
            XCTFail("listed after the unmount began: \(listed.map(\.name))")
        } catch {}
        XCTAssertEqual(f.provider.enumerations(of: ItemIdentifier("/a")), 0)
        _ = d.shutdown(keepContent: true)
    }
}
