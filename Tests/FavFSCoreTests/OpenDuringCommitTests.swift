@testable import FavFSCore
import Foundation
import Providers
import XCTest

/// An open reads the item and whether it is dirty under `Domain.lock`, then retains its content
/// entry without the lock; an upload's commit can land in between. Found by fsx on an SMB mount
/// of a busy machine: the entry was made with the version from before the commit, and the next
/// write through that handle took our own upload for a change at the remote, so the user's
/// edit went to a conflict copy and the file showed the size of the upload before it.
final class OpenDuringCommitTests: XCTestCase {
    func testAnOpenThatSawTheOldVersionWritesOnTopOfOurOwnUpload() async throws {
        let f = try LocalFixture()
        try f.write("a.txt", Data("one\n".utf8))
        let d = try f.makeDomain()
        let id = ItemIdentifier("/a.txt")
        _ = try await d.children(of: .rootContainer)
        let (h, _) = try await d.openFile(id, write: true, truncate: false)
        _ = try Data("two, longer\n".utf8).withUnsafeBytes { try d.write(handle: h, offset: 0, $0) }
        // What an open reads under the lock, before the upload of that change commits...
        let (seen, wasDirty) = d.placeholders.snapshot(id)
        let before = try XCTUnwrap(seen)
        XCTAssertTrue(wasDirty)
        d.closeFile(h)
        try await d.writeBack.flushUploads(under: id, host: d.writing)
        let committed = try XCTUnwrap(d.cachedItem(id))
        XCTAssertNotEqual(Domain.contentVersion(committed), Domain.contentVersion(before), "the upload made a new version")
        // ...and the entry it retains after the commit.
        let entry = try d.reading.retainForOpen(before, version: Domain.contentVersion(before), dirty: wasDirty)
        XCTAssertEqual(entry.withLock { $0.version }, Domain.contentVersion(committed),
                       "the entry carries the version from before the commit")
        // A write through that handle is a change of the committed version, not a conflict.
        let h2 = d.handles.add(OpenFile(item: before, entry: entry, writable: true))
        _ = try Data("three, the last\n".utf8).withUnsafeBytes { try d.write(handle: h2, offset: 0, $0) }
        d.closeFile(h2)
        try await d.writeBack.flushUploads(under: id, host: d.writing)
        XCTAssertEqual(try Data(contentsOf: f.served.appendingPathComponent("a.txt")), Data("three, the last\n".utf8))
        let names = try FileManager.default.contentsOfDirectory(atPath: f.served.path)
        XCTAssertEqual(names, ["a.txt"], "a conflict copy of our own edit")
    }
}
