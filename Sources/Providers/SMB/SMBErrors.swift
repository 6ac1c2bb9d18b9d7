import FavFSCore
import Foundation

/// libsmbclient's failures (an errno, which it derives from the server's NT status) →
/// `ProviderError`, naming remote, path and operation.
struct SMBErrors: Sendable {
    let remote: String

    func failure(_ operation: String, _ path: String, _ err: Int32) -> ProviderError {
        let what = String(cString: strerror(err))
        let kind: ProviderError.Kind
        var detail = "\(operation): \(what)"
        switch err {
        case ENOENT: kind = .notFound
        case EACCES, EPERM:
            kind = .denied
            detail = "\(operation): access denied (a wrong user or password, or no permission on this path)"
        case EEXIST: kind = .exists
        case ENOTEMPTY: kind = .notEmpty
        case ENOSPC, EDQUOT: kind = .noSpace
        case ENOTDIR: kind = .notAFolder
        case EISDIR: kind = .isAFolder
        case EROFS: kind = .readOnly
        case EFBIG: kind = .tooLarge
        case ENAMETOOLONG: kind = .nameTooLong
        case EXDEV: kind = .crossDevice
        case EINVAL:
            kind = .invalidName
            detail = "\(operation): the server refused the request or the name (\(what))"
        case EBUSY, ETXTBSY:
            // A sharing violation: another client has the file open without sharing it.
            kind = .locked
            detail = "\(operation): in use by another client (\(what))"
        case ETIMEDOUT: kind = .timedOut
        case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ECONNRESET, ECONNABORTED, EPIPE, ENOTCONN, ENOTSOCK:
            kind = .unreachable
        case ENOMEM, ENODEV, ENXIO:
            kind = .serverError
        default:
            kind = .serverError
        }
        return ProviderError(kind, remote: remote, path: path, detail: detail)
    }
}
