import XCTest
final class FavFSCoreTestsPlaceholder: XCTestCase { func testNothing() {} }
