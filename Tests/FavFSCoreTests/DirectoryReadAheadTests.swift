import XCTest
import FavFSCore
import Providers

/// Reading subfolders in order lists the next few of their siblings in the background (a tree
/// walk's read-ahead), at once and each once; a single folder opened lists none.
final class DirectoryReadAheadTests: XCTestCase {
    func testReadingASubfolderListsTheNextSiblingsAhead() async throws {
        let f = try LocalFixture()
        let names = (0..<40).map { String(format: "sub%03d", $0) }
        for name in names { try f.write("\(name)/x.txt", Data("x".utf8)) }
        try f.write("file.txt", Data("not a folder".utf8))
        var o = DomainOptions()
        o.prefetchSubfolders = 6
        o.prefetchConcurrency = 2
        // The other prefetch (the first subfolders of a folder just listed) waits past the test.
        o.prefetchDelay = 600
        let d = try f.makeDomain(options: o)
        func listings(_ range: Range<Int>) -> [Int] { range.map { f.provider.enumerations(of: ItemIdentifier("/" + names[$0])) } }
        func waitFor(_ range: Range<Int>) async throws {
            let deadline = Date().addingTimeInterval(20)
            while listings(range).contains(0) && Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
        }

        _ = try await d.children(of: .rootContainer)
        // One folder opened is a visit, not a walk: its neighbours (maybe large) stay unlisted.
        _ = try await d.children(of: ItemIdentifier("/sub009"))
        try await Task.sleep(nanoseconds: 500_000_000)
        XCTAssertEqual(listings(10..<40), Array(repeating: 0, count: 30), "a single folder read lists no neighbour")
        // The next one read after it: a walk.
        _ = try await d.children(of: ItemIdentifier("/sub010"))
        try await waitFor(11..<17)
        XCTAssertEqual(listings(11..<17), Array(repeating: 1, count: 6), "the 6 subfolders after sub010, each listed once")
        try await Task.sleep(nanoseconds: 300_000_000)
        XCTAssertEqual(listings(0..<9), Array(repeating: 0, count: 9), "nothing before the folders read")
        XCTAssertEqual(listings(17..<40), Array(repeating: 0, count: 23), "nothing past the window")

        // The walk goes on: reading sub016 (listed ahead: served from memory) moves the window.
        _ = try await d.children(of: ItemIdentifier("/sub016"))
        try await waitFor(17..<23)
        try await Task.sleep(nanoseconds: 300_000_000)
        XCTAssertEqual(listings(10..<23), Array(repeating: 1, count: 13), "each listed once, sub016 not again")
        XCTAssertEqual(listings(23..<40), Array(repeating: 0, count: 17))
        // What was read ahead is what a walk then gets, without another listing.
        let items = try await d.children(of: ItemIdentifier("/sub020"))
        XCTAssertEqual(items.map(\.name), ["x.txt"])
        XCTAssertEqual(f.provider.enumerations(of: ItemIdentifier("/sub020")), 1)
        // Whether a never-listed subfolder was listed is asked of memory after `preload`, never
        // of the store under `Domain.lock`.
        XCTAssertNil(StoreWitness.allowed["a folder not preloaded"], "store reads under Domain.lock: \(StoreWitness.allowed)")
    }
}
