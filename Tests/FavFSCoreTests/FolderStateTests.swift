import XCTest
@testable import FavFSCore

/// A folder's children in memory: one sorted array searched by name.
final class FolderStateTests: XCTestCase {
    private let folder = ItemIdentifier("/photos")
    private func file(_ name: String, size: Int64 = 1) -> Item {
        Item(identifier: folder.child(name), kind: .file, size: size)
    }

    func testChildrenAreInNameOrderAndTheFirstOfADuplicateNameWins() {
        let s = FolderState(folder: folder, items: [file("b"), file("a b"), file("a", size: 1), file("ä"), file("a", size: 2), file("A")],
                            listedAt: 1)
        XCTAssertEqual(s.items.map(\.name), ["A", "a", "a b", "b", "ä"])
        XCTAssertEqual(s["a"]?.size, 1)
        XCTAssertNil(s["c"])
        XCTAssertEqual(s["ä"]?.name, "ä")
    }

    func testSettingInsertsReplacesAndRemovesInPlace() {
        var s = FolderState(folder: folder, items: (0..<1000).map { file(String(format: "f%04d", $0 * 2)) }, listedAt: 1)
        s["f0001"] = file("f0001", size: 7)
        s["f0000"] = file("f0000", size: 9)
        s["f1998"] = nil
        s["missing"] = nil
        s["f0002"]?.size = 5
        XCTAssertEqual(s.items.count, 1000)
        XCTAssertEqual(Array(s.items.prefix(3).map(\.name)), ["f0000", "f0001", "f0002"])
        XCTAssertEqual(s["f0000"]?.size, 9)
        XCTAssertEqual(s["f0001"]?.size, 7)
        XCTAssertEqual(s["f0002"]?.size, 5)
        XCTAssertNil(s["f1998"])
        XCTAssertEqual(s.items.map(\.name), s.items.map(\.name).sorted())
    }

    func testTheRootsChildrenAreFoundToo() {
        var s = FolderState(folder: .rootContainer, items: [Item(identifier: ItemIdentifier("/x"), kind: .folder)], listedAt: nil)
        XCTAssertEqual(s["x"]?.kind, .folder)
        s["y"] = Item(identifier: ItemIdentifier("/y"), kind: .file)
        XCTAssertEqual(s.items.map(\.name), ["x", "y"])
    }
}

/// The change tracking a listing in flight is merged with.
final class ListingChangesTests: XCTestCase {
    func testOnlyChangesDuringAListingAreNotedAndEachListingSeesItsOwn() {
        var c = ListingChanges()
        let folder = ItemIdentifier("/d")
        c.note(folder.child("before"))  // no listing under way: nothing to note
        let first = c.listingStarts(folder)
        c.note(folder.child("a"))
        let merged = c.sequence
        c.note(folder.child("b"))
        c.note(ItemIdentifier("/other/x"))  // another folder, not being listed
        XCTAssertEqual(Set(c.names(in: folder, changedAfter: first)), ["a", "b"])
        XCTAssertEqual(c.names(in: folder, changedAfter: merged), ["b"], "changed after the merge: written again after the save")
        XCTAssertEqual(c.names(in: ItemIdentifier("/other"), changedAfter: 0), [])
        c.note(folder.child("a"))  // changed again: its latest number counts
        XCTAssertEqual(Set(c.names(in: folder, changedAfter: merged)), ["a", "b"])
        c.listingEnds(folder)
        XCTAssertEqual(c.names(in: folder, changedAfter: 0), [])
        c.note(folder.child("c"))
        XCTAssertEqual(c.names(in: folder, changedAfter: 0), [], "no listing under way any more")
    }
}
