import XCTest
@testable import FavFSCore

final class ByteRangeSetTests: XCTestCase {
    func testInsertMergesTouchingAndOverlapping() {
        var s = ByteRangeSet()
        s.insert(10..<20)
        s.insert(30..<40)
        XCTAssertEqual(s.ranges, [10..<20, 30..<40])
        s.insert(20..<30) // touches both
        XCTAssertEqual(s.ranges, [10..<40])
        s.insert(0..<5)
        s.insert(3..<12)
        XCTAssertEqual(s.ranges, [0..<40])
        s.insert(50..<50) // empty: ignored
        XCTAssertEqual(s.count, 40)
    }

    func testContainsAndMissing() {
        let s = ByteRangeSet([0..<100, 200..<300])
        XCTAssertTrue(s.contains(0..<100))
        XCTAssertTrue(s.contains(250..<260))
        XCTAssertFalse(s.contains(90..<110))
        XCTAssertFalse(s.contains(100..<101))
        XCTAssertTrue(s.contains(5..<5))
        XCTAssertEqual(s.missing(in: 50..<350), [100..<200, 300..<350])
        XCTAssertEqual(s.missing(in: 0..<100), [])
        XCTAssertEqual(s.missing(in: 120..<130), [120..<130])
        XCTAssertEqual(ByteRangeSet().missing(in: 0..<10), [0..<10])
    }

    func testClamp() {
        var s = ByteRangeSet([0..<100, 200..<300])
        s.clamp(to: 250)
        XCTAssertEqual(s.ranges, [0..<100, 200..<250])
        s.clamp(to: 50)
        XCTAssertEqual(s.ranges, [0..<50])
    }

    func testPersistedFormRoundTripsAndRejectsGarbage() {
        let s = ByteRangeSet([0..<131072, 262144..<393216])
        XCTAssertEqual(ByteRangeSet(persisted: s.description), s)
        XCTAssertEqual(ByteRangeSet(persisted: ""), ByteRangeSet())
        XCTAssertNil(ByteRangeSet(persisted: "1-x"))
        XCTAssertNil(ByteRangeSet(persisted: "10-5"))
        XCTAssertNil(ByteRangeSet(persisted: "-3-4"))
    }

    func testRandomizedAgainstABitmap() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var s = ByteRangeSet()
            var bits = [Bool](repeating: false, count: 300)
            for _ in 0..<10 {
                let a = Int.random(in: 0..<300, using: &rng), b = Int.random(in: a...300, using: &rng)
                s.insert(Int64(a)..<Int64(b))
                for i in a..<b { bits[i] = true }
            }
            XCTAssertEqual(s.count, Int64(bits.filter { $0 }.count))
            let a = Int.random(in: 0..<300, using: &rng), b = Int.random(in: a...300, using: &rng)
            XCTAssertEqual(s.contains(Int64(a)..<Int64(b)), bits[a..<b].allSatisfy { $0 })
            let missing = s.missing(in: Int64(a)..<Int64(b)).reduce(0) { $0 + $1.count }
            XCTAssertEqual(missing, bits[a..<b].filter { !$0 }.count)
        }
    }
}
