import FavFSCore
import Foundation
import XCTest

/// Where partial reads cost a connection (FTP), a read to the end of a small file starts at
/// the missing bytes just before it: the kernel sends the reads of its read-ahead window in
/// parallel, and one that arrives before an earlier one must not leave that earlier one a
/// request that stops where it starts (an abort, then a new login).
final class ReadToTheEndTests: XCTestCase {
    func testAReadThatArrivesBeforeTheEarlierOnesStartsWhereTheyStart() async throws {
        let f = try LocalFixture()
        f.provider.extraCapabilities = [.partialReadsCostAConnection]
        let small = randomData(1 << 20, seed: 5), mid = randomData(3 << 20, seed: 7), big = randomData(20 << 20, seed: 6)
        try f.write("small.bin", small)
        try f.write("mid.bin", mid)
        try f.write("big.bin", big)
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)

        let (h, _) = try d.openFile(ItemIdentifier("/small.bin"))
        let late = try await d.read(handle: h, offset: 512 << 10, size: 128 << 10)
        XCTAssertEqual(bytes(late), small.subdata(in: (512 << 10)..<(640 << 10)))
        let early = try await d.read(handle: h, offset: 0, size: 128 << 10)
        XCTAssertEqual(bytes(early), small.prefix(128 << 10))
        XCTAssertEqual(f.provider.reads.filter { $0.0 == "/small.bin" }.map(\.1), [0..<Int64(small.count)],
                       "one request from the first byte to the end")
        d.closeFile(h)

        // A small file (at most 8 MiB) from its first missing byte, however far back.
        let (hm, _) = try d.openFile(ItemIdentifier("/mid.bin"))
        _ = try await d.read(handle: hm, offset: 2 << 20, size: 4096)
        XCTAssertEqual(f.provider.reads.filter { $0.0 == "/mid.bin" }.map(\.1), [0..<Int64(mid.count)])
        d.closeFile(hm)

        // Near the end of a big file: back by at most the read-ahead span (1 MiB), not to 0.
        let (hb, _) = try d.openFile(ItemIdentifier("/big.bin"))
        _ = try await d.read(handle: hb, offset: 16 << 20, size: 4096)
        XCTAssertEqual(f.provider.reads.filter { $0.0 == "/big.bin" }.map(\.1), [Int64(15 << 20)..<Int64(big.count)])
        d.closeFile(hb)
    }
}
