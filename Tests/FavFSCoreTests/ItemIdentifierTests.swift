import XCTest
import FavFSCore

final class ItemIdentifierTests: XCTestCase {
    func testPathParts() {
        let id = ItemIdentifier.rootContainer.child("a b").child("c#d")
        XCTAssertEqual(id.rawValue, "/a b/c#d")
        XCTAssertEqual(id.name, "c#d")
        XCTAssertEqual(id.parent, ItemIdentifier("/a b"))
        XCTAssertEqual(id.parent?.parent, .rootContainer)
        XCTAssertNil(ItemIdentifier.rootContainer.parent)
        XCTAssertEqual(ItemIdentifier.rootContainer.name, "")
        XCTAssertEqual(id.components, ["a b", "c#d"])
    }

    func testNameValidation() {
        XCTAssertEqual(ItemIdentifier.validate(name: ""), .empty)
        XCTAssertEqual(ItemIdentifier.validate(name: "."), .dot)
        XCTAssertEqual(ItemIdentifier.validate(name: ".."), .dot)
        XCTAssertEqual(ItemIdentifier.validate(name: "a/b"), .slash)
        XCTAssertEqual(ItemIdentifier.validate(name: "a\0b"), .nul)
        XCTAssertEqual(ItemIdentifier.validate(name: String(repeating: "é", count: 128)), .tooLong)
        for ok in ["...", "trailing dots...", "tab\there", "100%", "what?", "ünï ☃", ".hidden"] {
            XCTAssertNil(ItemIdentifier.validate(name: ok), ok)
        }
    }

    /// "At or below" is one rule everywhere (pins, dirty items, cache entries, loaded
    /// listings): a sibling whose name begins with the folder's is not below it, and
    /// everything is below the root (a prefix built as `rawValue + "/"` missed all of it).
    func testAtOrBelow() {
        let a = ItemIdentifier("/a"), ab = ItemIdentifier("/ab"), deep = ItemIdentifier("/a/b/c")
        XCTAssertTrue(a.isAtOrBelow(a))
        XCTAssertFalse(a.isBelow(a))
        XCTAssertTrue(deep.isBelow(a))
        XCTAssertFalse(ab.isAtOrBelow(a), "a sibling that shares the name's beginning")
        XCTAssertFalse(a.isAtOrBelow(deep))
        for id in [a, ab, deep] {
            XCTAssertTrue(id.isBelow(.rootContainer), id.rawValue)
            XCTAssertTrue(id.isAtOrBelow(.rootContainer), id.rawValue)
        }
        XCTAssertTrue(ItemIdentifier.rootContainer.isAtOrBelow(.rootContainer))
        XCTAssertFalse(ItemIdentifier.rootContainer.isBelow(.rootContainer))
        XCTAssertEqual(ItemIdentifier.rootContainer.descendantPrefix, "/")
        XCTAssertEqual(a.descendantPrefix, "/a/")
    }
}
