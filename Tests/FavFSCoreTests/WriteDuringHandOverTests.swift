@testable import FavFSCore
import Foundation
import Providers
import XCTest

/// A write reads the name its handle's content answers to, marks that name dirty, writes the
/// bytes and says they landed. A conflict copy's hand-over (the remote changed under the edit:
/// the edit, its open handles included, becomes the copy's) can come between any two of those
/// steps. These tests put it there: the change must be the copy's, never the name's, which now
/// shows the other client's version.
final class WriteDuringHandOverTests: XCTestCase {
    private func served(_ f: LocalFixture, _ path: String) -> Data? {
        try? Data(contentsOf: f.served.appendingPathComponent(path))
    }

    /// An open handle whose edit was just handed to a conflict copy (fsync waiting for the
    /// remote meets the other client's save), and the copy's name.
    private func handedOver(_ f: LocalFixture) async throws -> (Domain, UInt64, ItemIdentifier) {
        try f.write("doc.txt", Data("original".utf8))
        var o = DomainOptions()
        o.fsyncWaitsForRemote = true
        let d = try f.makeDomain(options: o)
        _ = try await d.connect()
        _ = try await d.children(of: .rootContainer)
        let (h, _) = try await d.openFile(ItemIdentifier("/doc.txt"), write: true, truncate: false)
        _ = try Data("LOCAL!!!".utf8).withUnsafeBytes { try d.write(handle: h, offset: 0, $0) }
        try f.write("doc.txt", Data("remote edit".utf8))
        try await d.sync(handle: h)
        let entryNow = try d.reading.file(h).entry.id
        XCTAssertTrue(entryNow.name.hasPrefix("doc (conflict "), "the handle's content is the copy's: \(entryNow)")
        XCTAssertEqual(served(f, "doc.txt"), Data("remote edit".utf8))
        return (d, h, entryNow)
    }

    /// The write read the name before the hand-over and marks it after: the name must not be
    /// marked dirty (its upload would send the copy's bytes over the other client's save, or
    /// nothing); the mark goes to the copy.
    func testAWriteThatReadTheNameBeforeTheHandOverMarksTheCopy() async throws {
        let f = try LocalFixture()
        let (d, h, copy) = try await handedOver(f)
        let file = try d.reading.file(h)
        let name = ItemIdentifier("/doc.txt")
        XCTAssertThrowsError(try d.writing.markDirty(name, recording: file.entry, through: file)) { error in
            XCTAssertEqual((error as? ItemMovedMeanwhile)?.now, copy)
        }
        XCTAssertFalse(d.writing.isDirty(name), "the name was marked dirty with the copy's content")
        XCTAssertEqual(try d.writing.markDirtyRecording(through: file), copy)
        XCTAssertTrue(d.writing.isDirty(copy))
        XCTAssertFalse(d.writing.isDirty(name))
        XCTAssertFalse(try d.store.journalEntries().contains { $0.id == name }, "a journal row for the name")
        d.closeFile(h)
        try await d.waitForUpload(copy)
        XCTAssertEqual(served(f, "doc.txt"), Data("remote edit".utf8), "the other client's save keeps the name")
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }

    /// The hand-over came between the mark and the bytes landing: they land on the copy, and
    /// the copy is uploaded again with them.
    func testBytesLandingAfterTheHandOverReachTheCopy() async throws {
        let f = try LocalFixture()
        let (d, h, copy) = try await handedOver(f)
        let file = try d.reading.file(h)
        // The mark before the hand-over made the copy dirty again (`stillDirty`): the same state
        // a write marked just before it leaves.
        _ = try d.writing.markDirtyRecording(through: file)
        _ = try Data("LATE".utf8).withUnsafeBytes { try file.entry.write(at: 8, $0) }
        XCTAssertEqual(d.writing.changeLanded(in: file.entry), copy)
        d.closeFile(h)
        try await d.waitForUpload(copy)
        XCTAssertEqual(served(f, copy.name), Data("LOCAL!!!LATE".utf8))
        XCTAssertEqual(served(f, "doc.txt"), Data("remote edit".utf8))
        XCTAssertEqual(try d.store.journalEntries(), [])
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }

    /// Writes through the handle after the hand-over, as a program goes on writing: the copy.
    func testWritesAfterTheHandOverGoToTheCopy() async throws {
        let f = try LocalFixture()
        let (d, h, copy) = try await handedOver(f)
        _ = try Data("MORE".utf8).withUnsafeBytes { try d.write(handle: h, offset: 8, $0) }
        XCTAssertFalse(d.writing.isDirty(ItemIdentifier("/doc.txt")))
        d.closeFile(h)
        try await d.waitForUpload(copy)
        XCTAssertEqual(served(f, copy.name), Data("LOCAL!!!MORE".utf8))
        XCTAssertEqual(served(f, "doc.txt"), Data("remote edit".utf8))
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }
}
