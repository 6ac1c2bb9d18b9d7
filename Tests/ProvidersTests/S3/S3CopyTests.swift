import Foundation
import XCTest
import FavFSCore
@testable import Providers
import TestSupport

/// Server-side copies against moto: CopyObject, never over an existing key.
final class S3CopyTests: XCTestCase {
    func testCopyObjectNeverReplaces() async throws {
        let f = try S3Fixture("copy")
        var data = Data(count: 12 << 20 + 12345)
        data.withUnsafeMutableBytes { raw in for i in 0..<raw.count { raw[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 7) } }
        try f.server.put(f.key("src.bin"), data)
        try f.seed(["taken.txt": "taken"], folders: ["dir"])
        let p = try f.provider()
        let src = try await p.item(for: ItemIdentifier("/src.bin"))

        let copy = try await p.copyItem(src, to: ItemIdentifier("/copy.bin"))
        XCTAssertEqual(copy.size, Int64(data.count))
        XCTAssertEqual(try f.server.get(f.key("copy.bin")), data)
        XCTAssertEqual(copy.version, src.version, "CopyObject of a single-part object keeps its MD5 ETag")

        // Never over an existing file or folder.
        await s3AssertError(.exists) { try await p.copyItem(src, to: ItemIdentifier("/taken.txt")) }
        await s3AssertError(.exists) { try await p.copyItem(src, to: ItemIdentifier("/copy.bin")) }
        await s3AssertError(.exists) { try await p.copyItem(src, to: ItemIdentifier("/dir")) }
        XCTAssertEqual(try f.server.get(f.key("taken.txt")), Data("taken".utf8))
        XCTAssertEqual(p.maxServerSideCopySize, 5 << 30)
        XCTAssertTrue(p.capabilities.contains(.serverSideCopy))
    }
}
