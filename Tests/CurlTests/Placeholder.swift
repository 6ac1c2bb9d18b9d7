import XCTest
final class CurlTestsPlaceholder: XCTestCase { func testNothing() {} }
