import Foundation
import XCTest
@testable import FavFSCore

/// The body of a streamed upload: what the transport is told, and when a waiting one is woken.
final class GrowingContentTests: XCTestCase {
    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func hit() { lock.withLock { count += 1 } }
        var hits: Int { lock.withLock { count } }
    }

    func testAWaitingStreamIsWokenPerBatchAndAtTheEnd() {
        let content = GrowingContent(length: 100)
        XCTAssertEqual(content.poll(offset: 0) { XCTFail("no wait") }, .available(upTo: 100))
        let woken = Flag()
        XCTAssertEqual(content.poll(offset: 100) { woken.hit() }, .wait)
        content.extend(to: 100 + GrowingContent.wakeBatch - 1)
        XCTAssertEqual(woken.hits, 0, "woken for less than a batch")
        content.extend(to: 100 + GrowingContent.wakeBatch)
        XCTAssertEqual(woken.hits, 1)
        let ended = Flag()
        XCTAssertEqual(content.poll(offset: 100 + GrowingContent.wakeBatch) { ended.hit() }, .wait)
        XCTAssertTrue(content.finish(length: 100 + GrowingContent.wakeBatch))
        XCTAssertEqual(ended.hits, 1, "the end wakes whatever the batch")
        XCTAssertEqual(content.poll(offset: 100 + GrowingContent.wakeBatch) { XCTFail("no wait") }, .ended(length: 100 + GrowingContent.wakeBatch))
    }

    func testAPieceIsHandedOverWhenItIsCompleteNotABatchLater() async {
        let content = GrowingContent(length: 10)
        let done = Flag()
        let waiter = Task { () -> GrowingContent.State in
            let state = await content.bytes(upTo: 5_000)
            done.hit()
            return state
        }
        try? await Task.sleep(nanoseconds: 50_000_000)
        content.extend(to: 4_999)
        try? await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertEqual(done.hits, 0, "handed over before the piece was complete")
        content.extend(to: 5_000)
        for _ in 0..<1000 where done.hits == 0 { try? await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertEqual(done.hits, 1, "the complete piece was not handed over")
        content.finish(length: 5_000)  // releases the waiter whatever happened
        let state = await waiter.value
        XCTAssertEqual(state, .available(upTo: 5_000))
    }

    func testAFinishAtAnotherLengthOrAnAbandonFailsTheStream() {
        let short = GrowingContent(length: 50)
        XCTAssertFalse(short.finish(length: 60))
        guard case .abandoned = short.poll(offset: 0, wake: {}) else { return XCTFail("not abandoned") }
        let given = GrowingContent(length: 50)
        let woken = Flag()
        XCTAssertEqual(given.poll(offset: 50) { woken.hit() }, .wait)
        given.abandon("a write went back")
        XCTAssertEqual(woken.hits, 1)
        XCTAssertEqual(given.poll(offset: 0, wake: {}), .abandoned("a write went back"))
        given.extend(to: 80)
        XCTAssertEqual(given.currentLength, 50, "nothing grows after an abandon")
    }
}
