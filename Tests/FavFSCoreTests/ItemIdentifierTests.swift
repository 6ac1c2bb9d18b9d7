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
}
