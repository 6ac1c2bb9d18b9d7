import Foundation
import FavFSCore

/// The one place where errors become errno values.
public enum ErrnoMapping {
    public static func errno(for kind: ProviderError.Kind) -> Int32 {
        switch kind {
        case .notFound: return ENOENT
        case .denied: return EACCES
        case .exists: return EEXIST
        case .notEmpty: return ENOTEMPTY
        case .noSpace: return ENOSPC
        case .tooLarge: return EFBIG
        case .notSupported: return ENOTSUP
        case .readOnly: return EROFS
        case .crossDevice: return EXDEV
        case .versionChanged: return ESTALE
        case .notAFolder: return ENOTDIR
        case .isAFolder: return EISDIR
        case .invalidName: return EINVAL
        case .nameTooLong: return ENAMETOOLONG
        case .cancelled: return EINTR
        case .locked: return EBUSY
        case .badHandle: return EBADF
        case .unreachable, .timedOut, .invalidResponse, .serverError, .localIO: return EIO
        }
    }

    public static func errno(for error: any Error) -> Int32 {
        if let e = error as? ProviderError { return errno(for: e.kind) }
        if error is CancellationError { return EINTR }
        return EIO
    }
}
