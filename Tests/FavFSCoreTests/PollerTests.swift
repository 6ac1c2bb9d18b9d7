import XCTest
@testable import FavFSCore

/// The poller's decision, as a value: whether a loaded folder is listed again now.
final class PollerTests: XCTestCase {
    private let options: DomainOptions = {
        var o = DomainOptions()
        o.pollInterval = 15
        o.retryAfterFailure = 30
        return o
    }()

    private func due(listedAgo: Double?, failedAgo: Double? = nil, entries: Int = 10, seconds: Double = 0.01) -> Bool {
        let now = 1_000_000.0
        let facts = Poller.ListingFacts(listedAt: listedAgo.map { now - $0 }, lastFailure: failedAgo.map { now - $0 },
                                        entries: entries, listingSeconds: seconds)
        return Poller.isDue(facts, now: now, options: options)
    }

    func testAFolderIsDueOnceAnIntervalHasPassedSinceItsListing() {
        XCTAssertFalse(due(listedAgo: 1), "a user's ls just listed it")
        XCTAssertTrue(due(listedAgo: 14), "within 10% of the interval: this round, not the next")
        XCTAssertTrue(due(listedAgo: 600))
        XCTAssertTrue(due(listedAgo: nil), "never listed in full")
    }

    func testAFailedListingWaitsBeforeTheNextTry() {
        XCTAssertFalse(due(listedAgo: 600, failedAgo: 5))
        XCTAssertTrue(due(listedAgo: 600, failedAgo: 31))
    }

    func testOnlyALongSlowListingIsPolledLessOften() {
        // 100,000 entries listed in 3 s: at most 5% of the time, every 60 s.
        XCTAssertFalse(due(listedAgo: 30, entries: 100_000, seconds: 3))
        XCTAssertTrue(due(listedAgo: 61, entries: 100_000, seconds: 3))
        // A short folder that was slow once (a loaded machine) is not held back.
        XCTAssertTrue(due(listedAgo: 16, entries: 20, seconds: 3))
    }
}
