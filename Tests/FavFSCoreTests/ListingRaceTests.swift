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
}
