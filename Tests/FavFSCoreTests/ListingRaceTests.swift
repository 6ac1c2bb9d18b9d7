import XCTest
import FavFSCore
import Providers

/// A listing that was already on its way when something was created, removed or renamed here
/// must not undo that change (found by `cp -r` into an SFTP mount with --dir-cache-time 0).
final class ListingRaceTests: XCTestCase {
    func testAFolderMadeDuringASlowListingStays() async throws {
        let f = try LocalFixture()
        try f.write("old.txt", Data("x".utf8))
        let d = try f.makeDomain(dirCacheTime: 0)
        _ = try await d.children(of: .rootContainer)
        f.provider.listingDelay = 300_000_000
        let before = f.provider.enumerations(of: .rootContainer)
        // Served from placeholders; a revalidation starts and lists the remote at once.
        _ = try await d.children(of: .rootContainer)
        try await Task.sleep(nanoseconds: 50_000_000)
        _ = try await d.makeFolder(.rootContainer, "new folder")
        try await d.remove(.rootContainer, "old.txt")
        // Let the revalidation (which saw old.txt and no new folder) land.
        try await Task.sleep(nanoseconds: 600_000_000)
        XCTAssertEqual(f.provider.enumerations(of: .rootContainer), before + 1)
        f.provider.listingDelay = 0
        let names = Set(try d.store.listing(of: .rootContainer).items.map(\.name))
        XCTAssertEqual(names, ["new folder"], "placeholders after the late listing")
        let served = try await d.lookup(.rootContainer, "new folder")
        XCTAssertEqual(served.kind, .folder)
        do { _ = try await d.lookup(.rootContainer, "old.txt"); XCTFail("a removed file came back") }
        catch let e as ProviderError { XCTAssertEqual(e.kind, .notFound) }
    }

    /// A listing answers from memory before its placeholders are saved. What is created and
    /// removed here right after (a `cp` into a folder just listed) lands during that save and
    /// must be what the store holds once it is done: a later mount starts from the store.
    func testChangesMadeWhileAListingIsSavedStay() async throws {
        let f = try LocalFixture()
        // Enough entries that saving them takes tens of milliseconds.
        for i in 0..<20_000 { _ = FileManager.default.createFile(atPath: f.served.path + "/f\(i)", contents: nil) }
        let d = try f.makeDomain()
        let listed = try await d.children(of: .rootContainer)
        XCTAssertEqual(listed.count, 20_000)
        // Right away, while the 20,000 placeholders are being saved.
        let (_, handle) = try await d.create(.rootContainer, "new.txt", exclusive: true)
        _ = try Data("new".utf8).withUnsafeBytes { try d.write(handle: handle, offset: 0, $0) }
        d.closeFile(handle)
        try await d.remove(.rootContainer, "f7")
        await d.waitForListingSaves()
        let stored = try d.store.listing(of: .rootContainer).items
        XCTAssertEqual(stored.count, 20_000, "the store holds \(stored.count) placeholders")
        XCTAssertTrue(stored.contains { $0.name == "new.txt" }, "a file created during the save lost its placeholder")
        XCTAssertFalse(stored.contains { $0.name == "f7" }, "a file removed during the save came back")
        try await d.waitForUpload(.rootContainer.child("new.txt"))
        XCTAssertEqual(try Data(contentsOf: f.served.appendingPathComponent("new.txt")), Data("new".utf8))
    }
}
