import XCTest
@testable import FavFSCore

/// What two listings of one folder differ in, as the kernel must hear it.
final class RemoteChangeTests: XCTestCase {
    private let folder = ItemIdentifier("/docs")
    private func file(_ name: String, size: Int64 = 1, version: String? = nil, modified: Double? = 100) -> Item {
        Item(identifier: folder.child(name), kind: .file, size: size, modified: modified, version: version)
    }
    private func diff(_ old: [Item], _ new: [Item]) -> [RemoteChange] {
        RemoteChange.diff(old: FolderState(folder: folder, items: old, listedAt: 1).items,
                          new: FolderState(folder: folder, items: new, listedAt: 2).items)
    }

    func testAddedRemovedAndUnchangedNamesInOnePass() {
        XCTAssertEqual(diff([file("a"), file("b"), file("d")], [file("a"), file("c"), file("d"), file("e")]),
                       [.removed(folder.child("b")), .added(folder.child("c")), .added(folder.child("e"))])
        XCTAssertEqual(diff([], [file("x")]), [.added(folder.child("x"))])
        XCTAssertEqual(diff([file("x")], []), [.removed(folder.child("x"))])
        XCTAssertEqual(diff([file("a"), file("b")], [file("a"), file("b")]), [])
    }

    func testAFileIsModifiedWhenItsVersionOrSizeChanges() {
        XCTAssertEqual(diff([file("a", version: "\"1\"")], [file("a", version: "\"2\"")]), [.modified(folder.child("a"))])
        // Same size, no versions: the time tells.
        XCTAssertEqual(diff([file("a", modified: 100)], [file("a", modified: 160)]), [.modified(folder.child("a"))])
        // With versions, a time that moves alone (a server rounding differently) is not a change.
        XCTAssertEqual(diff([file("a", version: "v", modified: 100)], [file("a", version: "v", modified: 101)]), [])
    }

    func testAWeakTagTurningStrongIsNoChange() {
        // Apache: W/"size-mtime" while the file is younger than a second, "size-mtime" after.
        XCTAssertEqual(diff([file("a", version: "W/\"e2-5f\"")], [file("a", version: "\"e2-5f\"")]), [])
        XCTAssertEqual(Domain.contentVersion(file("a", version: "W/\"e2-5f\"")), Domain.contentVersion(file("a", version: "\"e2-5f\"")))
        XCTAssertEqual(diff([file("a", version: "W/\"e2-5f\"")], [file("a", version: "\"e2-60\"")]), [.modified(folder.child("a"))])
    }

    func testAKindChangeIsARemovalAndAnAddition() {
        let asFolder = Item(identifier: folder.child("a"), kind: .folder)
        XCTAssertEqual(diff([file("a")], [asFolder]), [.removed(folder.child("a")), .added(folder.child("a"))])
    }

    func testAFolderChangesOnlyWithItsMode() {
        var before = Item(identifier: folder.child("sub"), kind: .folder, size: 4096, modified: 1)
        var after = before
        after.modified = 2; after.size = 8192
        XCTAssertEqual(diff([before], [after]), [])
        before.permissions = 0o755; after.permissions = 0o700
        XCTAssertEqual(diff([before], [after]), [.modified(folder.child("sub"))])
    }
}
