import XCTest
@testable import FUSEBridge

/// The read size asked of the kernel decides whether replies are spliced (zero copy, no buffer)
/// or copied through a malloc'ed buffer per read: it must fit the pipe libfuse splices through.
final class ReadSizeTests: XCTestCase {
    func testReadsFitTheDefaultPipeLimit() {
        // 1 MiB pipes (the kernel's default pipe-max-size): a 1 MiB reply plus header does not fit.
        XCTAssertEqual(FUSEMount.spliceableReadSize(pipeMax: 1 << 20), 512 << 10)
    }

    func testLargerPipesAllowTheKernelsLargestRead() {
        XCTAssertEqual(FUSEMount.spliceableReadSize(pipeMax: 4 << 20), 1 << 20)
        XCTAssertEqual(FUSEMount.spliceableReadSize(pipeMax: (1 << 20) + (16 << 10)), 1 << 20)
    }

    func testTinyPipesKeepAUsefulReadSize() {
        XCTAssertEqual(FUSEMount.spliceableReadSize(pipeMax: 64 << 10), 128 << 10)
    }

    func testThisMachinesLimitGivesAPowerOfTwo() {
        let size = FUSEMount.spliceableReadSize()
        XCTAssertEqual(size & (size - 1), 0)
        XCTAssertGreaterThanOrEqual(size, 128 << 10)
    }
}
