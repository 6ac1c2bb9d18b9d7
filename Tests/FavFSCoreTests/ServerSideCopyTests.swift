import XCTest
@testable import FavFSCore
import Providers

/// `Domain.copyRange` with the real local provider: when it copies at the remote, when it
/// leaves the copy to the kernel, and that the copied file's close uploads nothing.
final class ServerSideCopyTests: XCTestCase {
    private func domain(_ f: LocalFixture) throws -> Domain {
        let store = try PlaceholderStore(path: f.cacheDir.appendingPathComponent("placeholders.sqlite").path)
        let content = try ContentCache(directory: f.cacheDir.appendingPathComponent("content"), store: store, limit: 1 << 30)
        return Domain(provider: LocalProvider(root: f.served.path), store: store, content: content, options: DomainOptions())
    }

    func testAWholeCleanFileIntoANewOneIsCopiedAtTheRemote() async throws {
        let f = try LocalFixture()
        let data = randomData(3 << 20)
        try f.write("src.bin", data)
        let d = try domain(f)
        _ = try await d.children(of: .rootContainer)
        let (src, _) = try d.openFile(ItemIdentifier("/src.bin"))
        let (_, dst) = try await d.create(.rootContainer, "dst.bin", exclusive: true)
        // Past the end: nothing to copy (cp asks once more after the copy).
        let atEnd = try await d.copyRange(from: src, offset: Int64(data.count), to: dst, offset: 0, length: 100)
        XCTAssertEqual(atEnd, .copied(0))
        let whole = try await d.copyRange(from: src, offset: 0, to: dst, offset: 0, length: Int64.max / 2)
        XCTAssertEqual(whole, .copied(Int64(data.count)))
        // The kernel asks for the rest of a copy past what one answer carries (4 GiB): done already.
        let rest = try await d.copyRange(from: src, offset: 1 << 20, to: dst, offset: 1 << 20, length: 1 << 30)
        XCTAssertEqual(rest, .copied(Int64(data.count) - (1 << 20)))
        XCTAssertEqual(try Data(contentsOf: f.served.appendingPathComponent("dst.bin")), data)
        XCTAssertEqual(try d.store.journalEntries(), [], "no upload pending for the copy")
        XCTAssertEqual(d.cachedItem(ItemIdentifier("/dst.bin"))?.size, Int64(data.count))
        XCTAssertEqual(d.content.presentBytes(of: ItemIdentifier("/src.bin"), version: Domain.contentVersion(d.cachedItem(ItemIdentifier("/src.bin"))!)), 0,
                       "the source was not read")
        // A write through the handle would need the copy's content here first; its close uploads nothing.
        XCTAssertTrue(d.needsContentBeforeWriting(handle: dst))
        XCTAssertFalse(d.needsContentBeforeWriting(handle: src))
        d.closeFile(dst)
        d.closeFile(src)
        try await Task.sleep(nanoseconds: 300_000_000)
        XCTAssertEqual(try Data(contentsOf: f.served.appendingPathComponent("dst.bin")), data, "the copy stays")
        XCTAssertEqual(d.pendingUploads().items, 0)
        // Read back through the domain: fetched on demand.
        let (h, _) = try d.openFile(ItemIdentifier("/dst.bin"))
        let r = try await d.read(handle: h, offset: 0, size: 4096)
        XCTAssertEqual(bytes(r), data.prefix(4096))
        d.closeFile(h)
    }

    func testMoreAfterACopyFetchesItAndUploadsTheWhole() async throws {
        let f = try LocalFixture()
        let data = randomData(1 << 20)
        try f.write("src.bin", data)
        try f.write("b.txt", Data("b".utf8))
        let d = try domain(f)
        _ = try await d.children(of: .rootContainer)
        let (src, _) = try d.openFile(ItemIdentifier("/src.bin"))
        let (b, _) = try d.openFile(ItemIdentifier("/b.txt"))
        let (_, dst) = try await d.create(.rootContainer, "c.bin", exclusive: true)
        let first = try await d.copyRange(from: src, offset: 0, to: dst, offset: 0, length: 1 << 40)
        XCTAssertEqual(first, .copied(Int64(data.count)))
        // `cat src b > c`: b goes after the copy; the kernel writes it once the copy is here.
        let second = try await d.copyRange(from: b, offset: 0, to: dst, offset: Int64(data.count), length: 1 << 40)
        guard case .fallBack = second else { return XCTFail("\(second)") }
        XCTAssertFalse(d.needsContentBeforeWriting(handle: dst))
        _ = try Data("b".utf8).withUnsafeBytes { try d.write(handle: dst, offset: Int64(data.count), $0) }
        for h in [dst, b, src] { d.closeFile(h) }
        try await d.waitForUpload(ItemIdentifier("/c.bin"))
        XCTAssertEqual(try Data(contentsOf: f.served.appendingPathComponent("c.bin")), data + Data("b".utf8))
    }

    func testOtherCopiesAreLeftToTheKernel() async throws {
        let f = try LocalFixture()
        try f.write("src.bin", randomData(1 << 20))
        try f.write("old.bin", Data("old".utf8))
        let d = try domain(f)
        _ = try await d.children(of: .rootContainer)
        let (src, _) = try d.openFile(ItemIdentifier("/src.bin"))
        let (_, dst) = try await d.create(.rootContainer, "dst.bin", exclusive: true)
        func fallsBack(_ outcome: CopyOutcome, _ what: String) {
            if case .fallBack = outcome { return }
            XCTFail("\(what): \(outcome)")
        }
        fallsBack(try await d.copyRange(from: src, offset: 10, to: dst, offset: 0, length: 1 << 30), "from an offset")
        fallsBack(try await d.copyRange(from: src, offset: 0, to: dst, offset: 5, length: 1 << 30), "to an offset")
        fallsBack(try await d.copyRange(from: src, offset: 0, to: dst, offset: 0, length: 1000), "part of the file")
        // Into an existing file (opened truncated: not new here).
        let (old, _) = try await d.openFile(ItemIdentifier("/old.bin"), write: true, truncate: true)
        fallsBack(try await d.copyRange(from: src, offset: 0, to: old, offset: 0, length: 1 << 30), "over an existing file")
        // From a file with changes not uploaded (its bytes are only here).
        _ = try Data("new".utf8).withUnsafeBytes { try d.write(handle: old, offset: 0, $0) }
        fallsBack(try await d.copyRange(from: old, offset: 0, to: dst, offset: 0, length: 1 << 30), "from a dirty file")
        XCTAssertFalse(FileManager.default.fileExists(atPath: f.served.appendingPathComponent("dst.bin").path), "nothing copied")
        d.closeFile(old)
        d.closeFile(dst)
        d.closeFile(src)
        _ = await d.drainUploads { _, _ in }
        XCTAssertEqual(try Data(contentsOf: f.served.appendingPathComponent("dst.bin")), Data(), "the new file is uploaded as written: empty")
        XCTAssertEqual(try Data(contentsOf: f.served.appendingPathComponent("old.bin")), Data("new".utf8))
    }
}
