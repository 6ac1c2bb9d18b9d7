import Curl
import FavFSCore
import Foundation

/// HTTP statuses and transport failures → `ProviderError`, always naming remote, path and status.
struct WebDAVErrors: Sendable {
    let remote: String

    /// An error for a non-success HTTP answer to `method` on `path`. `meaning` overrides the
    /// general mapping where a status means something particular for one method (a 412 to
    /// `If-None-Match: *` is `.exists`; a 409 to PUT or MKCOL is a missing parent).
    func status(_ status: Int, method: String, path: String, body: Data = Data(),
                meaning: [Int: ProviderError.Kind] = [:]) -> ProviderError {
        let kind: ProviderError.Kind
        switch status {
        case _ where meaning[status] != nil: kind = meaning[status]!
        case 404, 410: kind = .notFound
        case 401, 403: kind = .denied
        case 423: kind = .denied  // locked by someone else
        case 412: kind = .versionChanged
        case 507: kind = .noSpace
        case 413: kind = .tooLarge
        case 414: kind = .nameTooLong
        // Refused for good, not a server in trouble: retrying would never help.
        case 405, 501: kind = .notSupported
        default: kind = .serverError
        }
        var detail = "\(method) failed: \(status) \(Self.reason(status))"
        if kind == .denied, status == 403, let length = Self.overlongPath(path) {
            // Apache (and any server mapping URLs to files) answers a path its disk cannot hold
            // (ENAMETOOLONG there) with a plain 403; nothing but the length tells them apart.
            return ProviderError(.nameTooLong, remote: remote, path: path, status: status,
                                 detail: detail + " (a path of \(length) bytes: longer than the server's disk can probably hold)")
        }
        if kind == .notSupported, status == 405 || status == 501 { detail += " (the server does not allow \(method.split(separator: " ").first ?? "it") here)" }
        if kind == .serverError, let snippet = Self.snippet(body) { detail += " — \(snippet)" }
        return ProviderError(kind, remote: remote, path: path, status: status, detail: detail)
    }

    /// The path's length in bytes when a server's disk likely cannot hold it: a name over 255
    /// bytes (NAME_MAX), or a whole path within 512 bytes of PATH_MAX (4,096), which the
    /// server's own folder adds to.
    static func overlongPath(_ path: String) -> Int? {
        let length = path.utf8.count
        if length >= 3_584 || path.split(separator: "/").contains(where: { $0.utf8.count > 255 }) { return length }
        return nil
    }

    /// An error for a transfer that got no complete answer.
    func transport(_ error: Error, method: String, path: String) -> ProviderError {
        if let error = error as? ProviderError { return error }
        guard let t = error as? TransportError else {
            if error is CancellationError {
                return ProviderError(.cancelled, remote: remote, path: path, detail: "\(method) cancelled")
            }
            return ProviderError(.unreachable, remote: remote, path: path, detail: "\(method) failed: \(error)")
        }
        let kind: ProviderError.Kind
        var detail = "\(method) failed: \(t.message)"
        switch t.kind {
        case .couldNotConnect, .tls, .other: kind = .unreachable
        case .timedOut: kind = .timedOut
        case .cancelled: kind = .cancelled; detail = "\(method) cancelled"
        case .writeFailed:
            kind = t.errno == ENOSPC || t.errno == EDQUOT ? .noSpace : .serverError
            detail = "\(method): writing to the content cache failed: \(t.message)"
        case .readFailed:
            kind = .localIO
            detail = "\(method): reading the content cache failed: \(t.message)"
        case .bodyTooLarge:
            kind = .invalidResponse
        }
        return ProviderError(kind, remote: remote, path: path, detail: detail)
    }

    func invalid(_ what: String, method: String, path: String, status: Int?) -> ProviderError {
        ProviderError(.invalidResponse, remote: remote, path: path, status: status, detail: "\(method): \(what)")
    }

    /// The start of a text error body, for messages.
    private static func snippet(_ body: Data) -> String? {
        guard !body.isEmpty, let s = String(data: body.prefix(200), encoding: .utf8) else { return nil }
        let plain = s.replacingOccurrences(of: "<[^>]+>", with: " ", options: .regularExpression)
            .split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return plain.isEmpty ? nil : plain
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 206: return "Partial Content"
        case 207: return "Multi-Status"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 416: return "Range Not Satisfiable"
        case 423: return "Locked"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 507: return "Insufficient Storage"
        default: return "HTTP \(status)"
        }
    }
}
