@testable import FavFSCore
import XCTest

/// The remote's reachability as told to the user: one event per transition, never per failure,
/// and a request that started before the last transition does not undo it.
final class UserEventsTests: XCTestCase {
    let down = ProviderError(.unreachable, detail: "connection refused")

    func testOneEventPerTransition() {
        let r = ReachabilityTracker()
        var t = ReachabilityTracker.clock
        XCTAssertNil(r.succeeded(startedAt: t), "online from the start: nothing to tell")
        XCTAssertEqual(r.failed(down, startedAt: t), .remoteOffline("connection refused"))
        t = ReachabilityTracker.clock
        XCTAssertNil(r.failed(down, startedAt: t), "a second failure is no news")
        XCTAssertNil(r.failed(ProviderError(.timedOut, detail: "no answer"), startedAt: t))
        XCTAssertEqual(r.succeeded(startedAt: t), .remoteOnline)
        XCTAssertNil(r.succeeded(startedAt: ReachabilityTracker.clock))
        XCTAssertFalse(r.isOffline)
    }

    func testAnswersAreNotUnreachability() {
        let r = ReachabilityTracker()
        for kind in [ProviderError.Kind.serverError, .denied, .notFound, .locked, .cancelled] {
            XCTAssertNil(r.failed(ProviderError(kind, detail: "x"), startedAt: ReachabilityTracker.clock), "\(kind)")
        }
        XCTAssertFalse(r.isOffline)
    }

    func testARequestOlderThanTheTransitionSaysNothing() {
        let r = ReachabilityTracker()
        let before = ReachabilityTracker.clock
        XCTAssertNotNil(r.failed(down, startedAt: ReachabilityTracker.clock))
        // A listing that started before the remote went away and succeeded late: not "back".
        XCTAssertNil(r.succeeded(startedAt: before))
        XCTAssertTrue(r.isOffline)
        XCTAssertEqual(r.succeeded(startedAt: ReachabilityTracker.clock), .remoteOnline)
        // A listing that started while it was down and failed late: not "offline" again.
        XCTAssertNil(r.failed(down, startedAt: before))
        XCTAssertFalse(r.isOffline)
    }

    func testStartedOfflineTellsOnlyTheReturn() {
        let r = ReachabilityTracker()
        r.startOffline()
        XCTAssertNil(r.failed(down, startedAt: ReachabilityTracker.clock))
        XCTAssertEqual(r.succeeded(startedAt: ReachabilityTracker.clock), .remoteOnline)
    }

    func testTheFeedCallsItsOneSubscriber() {
        let feed = Feed<UserEvent>()
        feed.publish(.remoteOnline)  // nobody listens: dropped
        let got = LockedEvents()
        feed.subscribe { got.append($0) }
        feed.publish(.remoteOffline("x"))
        feed.subscribe(nil)
        feed.publish(.remoteOnline)
        XCTAssertEqual(got.all, [.remoteOffline("x")])
    }
}

private final class LockedEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [UserEvent] = []
    func append(_ e: UserEvent) { lock.withLock { events.append(e) } }
    var all: [UserEvent] { lock.withLock { events } }
}
