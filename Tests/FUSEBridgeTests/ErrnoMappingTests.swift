import XCTest
import FavFSCore
@testable import FUSEBridge

/// Errors become errno values in one place, each kind to exactly one.
final class ErrnoMappingTests: XCTestCase {
    func testEveryErrorKindMapsToOneErrno() {
        let expected: [(ProviderError.Kind, Int32)] = [
            (.notFound, ENOENT), (.denied, EACCES), (.exists, EEXIST), (.notEmpty, ENOTEMPTY),
            (.noSpace, ENOSPC), (.tooLarge, EFBIG), (.notSupported, ENOTSUP), (.readOnly, EROFS),
            (.crossDevice, EXDEV), (.versionChanged, ESTALE), (.notAFolder, ENOTDIR), (.isAFolder, EISDIR),
            (.invalidName, EINVAL), (.nameTooLong, ENAMETOOLONG), (.cancelled, EINTR), (.locked, EBUSY),
            (.badHandle, EBADF), (.unreachable, EIO), (.timedOut, EIO), (.invalidResponse, EIO),
            (.serverError, EIO), (.localIO, EIO),
        ]
        for (kind, errno) in expected {
            XCTAssertEqual(ErrnoMapping.errno(for: kind), errno, "\(kind)")
            XCTAssertEqual(ErrnoMapping.errno(for: ProviderError(kind, detail: "x")), errno, "\(kind) as an error")
        }
    }

    func testOtherErrorsAreEIOAndCancellationIsEINTR() {
        struct Other: Error {}
        XCTAssertEqual(ErrnoMapping.errno(for: Other()), EIO)
        XCTAssertEqual(ErrnoMapping.errno(for: CancellationError()), EINTR)
    }
}
