import XCTest
@testable import FavFSCore

/// The poller lists a folder of a few entries at every interval, even after one of its
/// listings was slow (a loaded server): only long folders back off to 5% of the time.
final class PollBackOffTests: XCTestCase {
    func testASlowListingOfASmallFolderDoesNotHoldItsPollsBack() async throws {
        let f = try LocalFixture()
        try f.write("a.txt", Data("a".utf8))
        var o = DomainOptions()
        o.pollInterval = 0.2
        let d = try f.makeDomain(options: o)
        _ = try await d.connect()
        f.provider.listingDelay = 300_000_000
        _ = try await d.children(of: .rootContainer)   // took 0.3 s: once 20 × 0.3 = 6 s between polls
        f.provider.listingDelay = 0
        let before = f.provider.enumerations(of: .rootContainer)
        try await Task.sleep(nanoseconds: 700_000_000)
        for round in 1...3 {
            await d.poller.poll(round: round, host: d)
            try await Task.sleep(nanoseconds: 250_000_000)
        }
        XCTAssertGreaterThanOrEqual(f.provider.enumerations(of: .rootContainer), before + 2, "polls were held back by one slow listing")
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }
}
