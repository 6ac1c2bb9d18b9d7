import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// What a listing costs: the long listing alone and with a stat per entry, for 1,000 and 5,000
/// files, at several stat concurrencies. Slow: runs only with FAVFS_BENCH=1.
final class SFTPListingCostTests: XCTestCase {
    func testListingCost() async throws {
        guard ProcessInfo.processInfo.environment["FAVFS_BENCH"] == "1" else { throw XCTSkip("set FAVFS_BENCH=1") }
        let server = try SFTPTestServer.shared()
        for count in [1000, 5000] {
            let (area, dir) = try SFTPTestServer.area(server, "cost\(count)")
            for i in 0..<count { try Data("\(i)".utf8).write(to: dir.appendingPathComponent("file \(i).txt")) }
            // Files an hour old, as in a folder that is not being written: their stats can be reused.
            try Shell.sh("find '\(dir.path)' -type f -exec touch -d '-1 hour' {} +")
            let base = try SFTPTestServer.provider(server)
            for concurrency in [1, 8, 16, 32] {
                var config = base.configuration
                config.statConcurrency = concurrency
                // A fresh transport each time: connection setup is part of the cost.
                let p = SFTPProvider(configuration: config, transport: CurlTransport())
                var start = Date()
                let lines = try await SFTPListing.fetch(ItemIdentifier("/\(area)"), provider: p)
                let listingOnly = Date().timeIntervalSince(start)
                start = Date()
                let items = try await p.enumerateAll(in: ItemIdentifier("/\(area)"))
                let full = Date().timeIntervalSince(start)
                start = Date()
                let again = try await p.enumerateAll(in: ItemIdentifier("/\(area)"))
                let relist = Date().timeIntervalSince(start)
                XCTAssertEqual(lines.count, count)
                XCTAssertEqual(items.count, count)
                XCTAssertEqual(again.map(\.version), items.map(\.version))
                print(String(format: "SFTP cost: %d files, concurrency %2d: long listing %.3f s (first request, with login), listing + stats %.3f s, re-listing %.3f s",
                             count, concurrency, listingOnly, full, relist))
            }
        }
    }
}
