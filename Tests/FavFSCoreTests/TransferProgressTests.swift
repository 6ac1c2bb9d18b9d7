import XCTest
@testable import FavFSCore

/// The transfer registry behind `favfs status`: bytes, totals, rate, ETA, rewinds, downloads.
final class TransferProgressTests: XCTestCase {
    func testTransfersReportBytesRateAndETA() async throws {
        let r = TransferRegistry()
        let id = ItemIdentifier("/big.bin")
        XCTAssertNil(r.progress(of: id))
        let t = r.begin(id, .upload, total: 1000)
        t.add(100)
        try await Task.sleep(nanoseconds: 300_000_000)
        t.add(100)
        let s = try XCTUnwrap(r.snapshot().first)
        XCTAssertEqual(s.direction, .upload)
        XCTAssertEqual(s.bytesDone, 200)
        XCTAssertEqual(s.bytesTotal, 1000)
        XCTAssertGreaterThan(s.rateBytesPerSecond, 0)
        XCTAssertNotNil(s.etaSeconds)
        XCTAssertTrue(r.progress(of: id)! == (200, 1000))
        // A rewind (curl sends again) takes bytes back; never below zero, never past the total.
        t.add(-150)
        XCTAssertEqual(r.progress(of: id)?.done, 50)
        t.add(5000)
        XCTAssertEqual(r.progress(of: id)?.done, 1000)
        r.end(t)
        XCTAssertTrue(r.snapshot().isEmpty, "an ended transfer is not listed")
        XCTAssertNil(r.progress(of: id))
        // A download counts what is present, or more while bytes arrive.
        let present = Counter(300)
        let dl = r.begin(id, .download, total: 1000, done: { present.value })
        XCTAssertEqual(r.progress(of: id)?.done, 300)
        dl.add(200)
        XCTAssertEqual(r.progress(of: id)?.done, 500)
        present.value = 900
        XCTAssertEqual(r.progress(of: id)?.done, 900)
        r.end(dl)
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var v: Int64
        init(_ v: Int64) { self.v = v }
        var value: Int64 {
            get { lock.withLock { v } }
            set { lock.withLock { v = newValue } }
        }
    }
}
