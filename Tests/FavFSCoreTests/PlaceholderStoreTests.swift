import XCTest
import FavFSCore

final class PlaceholderStoreTests: XCTestCase {
    func testReplacingChildrenRemovesVanishedSubtreesOnly() throws {
        let dir = NSTemporaryDirectory() + "favfs-store-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = try PlaceholderStore(path: dir + "/p.sqlite")
        let root = Item(identifier: .rootContainer, kind: .folder)
        let a = ItemIdentifier("/a%_"), ab = ItemIdentifier("/a%_b") // LIKE wildcards in names
        try s.replaceChildren(of: root, with: [Item(identifier: a, kind: .folder), Item(identifier: ab, kind: .folder)], listedAt: 1)
        try s.replaceChildren(of: Item(identifier: a, kind: .folder), with: [Item(identifier: a.child("x"), kind: .file, size: 3)], listedAt: 2)
        try s.replaceChildren(of: Item(identifier: ab, kind: .folder), with: [Item(identifier: ab.child("y"), kind: .file)], listedAt: 2)
        XCTAssertEqual(try s.item(a)?.listedAt, 2)
        // A relisting of the root keeps a's own listing time.
        try s.replaceChildren(of: root, with: [Item(identifier: a, kind: .folder), Item(identifier: ab, kind: .folder)], listedAt: 3)
        XCTAssertEqual(try s.item(a)?.listedAt, 2)
        // a vanishes: it and its subtree go; a%_b (a prefix match for LIKE) stays.
        try s.replaceChildren(of: root, with: [Item(identifier: ab, kind: .folder)], listedAt: 4)
        XCTAssertNil(try s.item(a))
        XCTAssertNil(try s.item(a.child("x")))
        XCTAssertNotNil(try s.item(ab.child("y")))
        XCTAssertEqual(try s.children(of: .rootContainer).map(\.item.name), ["a%_b"])
    }
}
