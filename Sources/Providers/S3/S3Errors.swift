import Curl
import FavFSCore
import Foundation

/// S3 answers and transport failures → `ProviderError`, naming remote, path, HTTP status and
/// S3's error code. Messages never contain credentials: S3's own `Message` texts do not, and
/// URLs in transport errors carry none (keys go in a header, not the URL).
struct S3Errors: Sendable {
    let remote: String

    /// An error for a non-success answer to `method` on `path`. `meaning` overrides the mapping
    /// where an answer means something particular for one call (a 412 to `If-None-Match: *` is
    /// `.exists`), keyed by S3 error code or by status as a string.
    func status(_ status: Int, method: String, path: String, body: Data = Data(),
                meaning: [String: ProviderError.Kind] = [:]) -> ProviderError {
        let parsed = S3XML.parseError(body)
        let code = parsed?.code
        let kind: ProviderError.Kind
        if let code, let k = meaning[code] {
            kind = k
        } else if let k = meaning[String(status)] {
            kind = k
        } else if let code, let k = Self.kind(ofCode: code) {
            kind = k
        } else {
            kind = Self.kind(ofStatus: status)
        }
        var detail = "\(method) failed: \(status) \(WebDAVErrors.reason(status))"
        if let code {
            detail += ": \(code)"
            if let explanation = Self.explanation(code) {
                detail += " (\(explanation))"
            } else if let message = parsed?.message, !message.isEmpty {
                detail += " — \(message.prefix(200))"
            }
        }
        return ProviderError(kind, remote: remote, path: path, status: status, detail: detail)
    }

    /// A response that was 2xx but carried an `<Error>` body (S3 does this for
    /// CompleteMultipartUpload and CopyObject when they fail after the headers were sent).
    func embedded(_ body: Data, status: Int, method: String, path: String,
                  meaning: [String: ProviderError.Kind] = [:]) -> ProviderError? {
        guard S3XML.parseError(body) != nil else { return nil }
        return self.status(status, method: method, path: path, body: body, meaning: meaning)
    }

    static func kind(ofCode code: String) -> ProviderError.Kind? {
        switch code {
        case "NoSuchKey", "NoSuchBucket", "NoSuchUpload": return .notFound
        case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken",
             "TokenRefreshRequired", "AllAccessDisabled", "AccountProblem", "InvalidObjectState",
             "RequestTimeTooSkewed", "MissingSecurityHeader", "AuthorizationHeaderMalformed":
            return .denied
        case "PreconditionFailed", "ConditionalRequestConflict": return .versionChanged
        case "EntityTooLarge", "MaxMessageLengthExceeded": return .tooLarge
        case "KeyTooLongError", "InvalidObjectName": return .invalidName
        case "BucketAlreadyExists", "BucketAlreadyOwnedByYou": return .exists
        case "NotImplemented": return .notSupported
        case "SlowDown", "ServiceUnavailable", "InternalError": return .serverError
        default: return nil
        }
    }

    static func kind(ofStatus status: Int) -> ProviderError.Kind {
        switch status {
        case 404, 410: return .notFound
        case 401, 403: return .denied
        case 412: return .versionChanged
        case 409: return .versionChanged
        case 413: return .tooLarge
        case 501: return .notSupported
        default: return .serverError
        }
    }

    /// Words for the codes a user can act on: which credential is wrong.
    static func explanation(_ code: String) -> String? {
        switch code {
        case "InvalidAccessKeyId": return "the access key ID is not known to the server"
        case "SignatureDoesNotMatch": return "the secret access key does not match the access key ID"
        case "InvalidToken", "ExpiredToken": return "the session token is invalid or expired"
        case "AccessDenied": return "the credentials are valid but not allowed this operation"
        case "RequestTimeTooSkewed": return "this machine's clock differs too much from the server's"
        case "NoSuchBucket": return "the bucket does not exist"
        case "NoSuchKey": return "no such object"
        default: return nil
        }
    }

    /// An error for a transfer that got no complete answer (`WebDAVErrors` has the mapping).
    func transport(_ error: Error, method: String, path: String) -> ProviderError {
        WebDAVErrors(remote: remote).transport(error, method: method, path: path)
    }

    func invalid(_ what: String, method: String, path: String, status: Int?) -> ProviderError {
        ProviderError(.invalidResponse, remote: remote, path: path, status: status, detail: "\(method): \(what)")
    }
}
