import XCTest
import FavFSCore
@testable import FUSEBridge

/// The echo makes a server's change on the mount relative to the mount's root (and opens the
/// folder with openat2, refusing symlinks and `..`): a name that could not be one path component
/// is never echoed, so no server's listing can lead it to a file outside the mount.
final class ChangeEchoPathTests: XCTestCase {
    func testTheFolderIsRelativeToTheRoot() {
        XCTAssertEqual(ChangeEcho.relativeFolder(of: ItemIdentifier("/a.txt")), ".")
        XCTAssertEqual(ChangeEcho.relativeFolder(of: ItemIdentifier("/docs/a.txt")), "docs")
        XCTAssertEqual(ChangeEcho.relativeFolder(of: ItemIdentifier("/d é/sub/ü x")), "d é/sub")
    }

    func testNamesThatAreNotOneComponentAreNeverEchoed() {
        for raw in ["/", "/..", "/.", "/docs/..", "/../etc/passwd", "/docs/../x", "/a//b", "/docs/a\u{0}b", "//favfs-orphan-deleted-3"] {
            XCTAssertNil(ChangeEcho.relativeFolder(of: ItemIdentifier(raw)), raw)
        }
    }
}
