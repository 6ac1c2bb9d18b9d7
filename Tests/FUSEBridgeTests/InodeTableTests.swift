import XCTest
import FavFSCore
@testable import FUSEBridge

/// Inode numbers and the kernel's lookup counts; names after renames and deletes.
final class InodeTableTests: XCTestCase {
    func testLookupsAreCountedAndTheLastForgetDropsTheInode() {
        let t = InodeTable()
        let a = ItemIdentifier("/a")
        let ino = t.remember(a)
        XCTAssertNotEqual(ino, InodeTable.root)
        XCTAssertEqual(t.remember(a), ino, "the same item keeps its inode")
        XCTAssertEqual(t.existing(a), ino)
        t.forget(ino, 1)
        XCTAssertEqual(t.identifier(ino), a, "one lookup is still held")
        t.forget(ino, 1)
        XCTAssertNil(t.identifier(ino))
        XCTAssertNil(t.existing(a))
        XCTAssertNotEqual(t.remember(a), ino, "a forgotten inode number is not handed out again")
    }

    /// What the kernel was told of an inode (its size, a reader's refresh to a version) goes
    /// with the inode, and is never recorded for one the kernel does not hold.
    func testWhatTheKernelWasToldGoesWithTheInode() {
        let t = InodeTable()
        let ino = t.remember(ItemIdentifier("/f"))
        XCTAssertNil(t.toldSize(ino))
        t.noteTold(ino, size: 18)
        t.noteTold(ino, size: 10_800)
        XCTAssertEqual(t.toldSize(ino), 10_800, "the last size told")
        t.noteRefreshed(ino, version: "v2")
        XCTAssertTrue(t.wasRefreshed(ino, to: "v2"))
        XCTAssertFalse(t.wasRefreshed(ino, to: "v3"), "a later change is told again")
        t.forget(ino, 1)
        XCTAssertNil(t.toldSize(ino))
        XCTAssertFalse(t.wasRefreshed(ino, to: "v2"))
        t.noteTold(ino, size: 5)
        t.noteRefreshed(ino, version: "v2")
        XCTAssertNil(t.toldSize(ino), "nothing kept for an inode the kernel forgot")
        XCTAssertFalse(t.wasRefreshed(ino, to: "v2"))
    }

    func testTheRootIsNeverForgotten() {
        let t = InodeTable()
        XCTAssertEqual(t.remember(.rootContainer), InodeTable.root)
        t.forget(InodeTable.root, 100)
        XCTAssertEqual(t.identifier(InodeTable.root), .rootContainer)
    }

    func testARenameMovesTheSubtreeAndOrphansTheReplacedInode() {
        let t = InodeTable()
        let dir = t.remember(ItemIdentifier("/d")), inner = t.remember(ItemIdentifier("/d/x"))
        let target = t.remember(ItemIdentifier("/e"))
        let sibling = t.remember(ItemIdentifier("/dd"))  // shares the prefix, not the folder
        let replaced = t.move(ItemIdentifier("/d"), to: ItemIdentifier("/e"))
        XCTAssertEqual(t.identifier(dir), ItemIdentifier("/e"))
        XCTAssertEqual(t.identifier(inner), ItemIdentifier("/e/x"))
        XCTAssertEqual(t.identifier(sibling), ItemIdentifier("/dd"))
        XCTAssertEqual(t.identifier(target), replaced)
        XCTAssertTrue(replaced.map(InodeTable.isOrphan) ?? false, "\(String(describing: replaced))")
        XCTAssertEqual(t.existing(ItemIdentifier("/e")), dir)
        XCTAssertNil(t.existing(ItemIdentifier("/d")))
    }

    func testADeleteDetachesTheNameButTheKernelKeepsTheInode() {
        let t = InodeTable()
        let a = ItemIdentifier("/a")
        let ino = t.remember(a)
        let orphan = t.detach(a)
        XCTAssertEqual(t.identifier(ino), orphan)
        XCTAssertTrue(orphan.map(InodeTable.isOrphan) ?? false)
        XCTAssertNil(t.existing(a))
        XCTAssertNotEqual(t.remember(a), ino, "a new file of that name gets a new inode")
        XCTAssertNil(t.detach(ItemIdentifier("/never-seen")))
        XCTAssertFalse(InodeTable.isOrphan(ItemIdentifier("/a")))
    }
}
