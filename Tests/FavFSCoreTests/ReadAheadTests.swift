import XCTest
@testable import FavFSCore

/// The read-ahead window of one handle: small for a first read (a sniffer pays little), growing
/// while reads go on in order, back to nothing after a seek.
final class ReadAheadTests: XCTestCase {
    private let min = DomainOptions().minReadAhead, max = DomainOptions().maxReadAhead

    private func handle(size: Int64 = 1 << 30) -> OpenFile {
        let id = ItemIdentifier("/big.bin")
        let entry = ContentEntry(id: id, file: "1", path: "/nonexistent/1", fd: -1, version: "v", size: size, ranges: ByteRangeSet(), lastUsed: 0, pinned: false)
        return OpenFile(item: Item(identifier: id, kind: .file, size: size), entry: entry)
    }

    func testAFirstReadPrefetchesOnlyTheSmallWindow() {
        let f = handle()
        XCTAssertLessThanOrEqual(min, 256 << 10, "a sniffed file must not cost megabytes")
        XCTAssertEqual(f.readAhead(after: 0..<4096, maxWindow: max, minWindow: min), 4096..<(4096 + min))
    }

    func testTheWindowGrowsWhileReadsGoOnInOrder() {
        let f = handle()
        var offset: Int64 = 0, windows: [Int64] = []
        for _ in 0..<12 {
            let read = offset..<(offset + (1 << 20))
            if let p = f.readAhead(after: read, maxWindow: max, minWindow: min) { windows.append(p.upperBound - read.upperBound) }
            offset = read.upperBound
        }
        XCTAssertEqual(windows.first, min)
        XCTAssertEqual(windows.last, max, "a sequential reader reaches the full window: \(windows)")
        XCTAssertLessThanOrEqual(windows.firstIndex(of: max) ?? 99, 5, "\(windows)")
    }

    func testASeekStartsOver() {
        let f = handle()
        _ = f.readAhead(after: 0..<(1 << 20), maxWindow: max, minWindow: min)
        _ = f.readAhead(after: (1 << 20)..<(2 << 20), maxWindow: max, minWindow: min)
        XCTAssertNil(f.readAhead(after: (500 << 20)..<((500 << 20) + 4096), maxWindow: max, minWindow: min))
        XCTAssertEqual(f.readAhead(after: ((500 << 20) + 4096)..<((500 << 20) + 8192), maxWindow: max, minWindow: min).map { Int64($0.count) }, min)
    }
}
