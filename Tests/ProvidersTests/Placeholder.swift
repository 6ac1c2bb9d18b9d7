import XCTest
final class ProvidersTestsPlaceholder: XCTestCase { func testNothing() {} }
