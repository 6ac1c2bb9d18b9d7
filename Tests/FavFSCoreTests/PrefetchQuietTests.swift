import XCTest
import FavFSCore
import Providers

/// Background listings of subfolders give way to reading: they wait after the readdir that
/// calls for them, and while files are being opened or read.
final class PrefetchQuietTests: XCTestCase {
    func testSubfoldersAreListedOnlyOnceReadingPauses() async throws {
        let f = try LocalFixture()
        for i in 0..<3 { try f.write("sub\(i)/x.txt", Data("x".utf8)) }
        try f.write("file.txt", Data("hello".utf8))
        var o = DomainOptions()
        // Wide margins, so that a slow machine cannot blur the phases.
        o.prefetchDelay = 1
        o.prefetchQuietTime = 1.5
        let d = try f.makeDomain(options: o)
        func subfolderListings() -> Int { (0..<3).map { f.provider.enumerations(of: ItemIdentifier("/sub\($0)")) }.reduce(0, +) }

        _ = try await d.children(of: .rootContainer)
        // Reading for 3 s, a read every 0.2 s: no background listing may start meanwhile.
        let (h, _) = try d.openFile(ItemIdentifier("/file.txt"))
        let until = Date().addingTimeInterval(3)
        while Date() < until {
            _ = try await d.read(handle: h, offset: 0, size: 5)
            try await Task.sleep(nanoseconds: 200_000_000)
        }
        d.closeFile(h)
        XCTAssertEqual(subfolderListings(), 0, "subfolders were listed while a file was being read")
        // Reading stopped: they are listed.
        let deadline = Date().addingTimeInterval(10)
        while subfolderListings() < 3 && Date() < deadline { try await Task.sleep(nanoseconds: 100_000_000) }
        XCTAssertEqual(subfolderListings(), 3)
        // Whether each subfolder was ever listed is asked of memory after `preload`, never of
        // the store under `Domain.lock`.
        XCTAssertNil(StoreWitness.allowed["a folder not preloaded"], "store reads under Domain.lock: \(StoreWitness.allowed)")
    }
}
