import Curl
import FavFSCore
import Foundation

/// Favart answers and transport failures → `ProviderError`, naming the remote, the path, the
/// request (`GET /media`) and the status, with the server's own words from `{"error": "..."}`.
struct FavartErrors: Sendable {
    let remote: String

    /// An error for a non-success answer. The general mapping: 404 → `.notFound`,
    /// 400 → `.invalidName` (the server refused a path or name), 413 → `.tooLarge`,
    /// 401/403 → `.denied` (the API has none, a proxy might), 500 and the rest → `.serverError`.
    /// `meaning` overrides it where a status means something particular for one request.
    func status(_ status: Int, request: String, path: String, body: Data = Data(),
                meaning: [Int: ProviderError.Kind] = [:]) -> ProviderError {
        let kind: ProviderError.Kind
        switch status {
        case _ where meaning[status] != nil: kind = meaning[status]!
        case 404, 410: kind = .notFound
        case 400: kind = .invalidName
        case 413: kind = .tooLarge
        case 401, 403: kind = .denied
        default: kind = .serverError
        }
        var detail = "\(request) failed: \(status) \(WebDAVErrors.reason(status))"
        if let message = Self.message(body) { detail += " — \(message)" }
        return ProviderError(kind, remote: remote, path: path, status: status, detail: detail)
    }

    /// An error for a request that got no complete answer (refused → `.unreachable`).
    func transport(_ error: Error, request: String, path: String) -> ProviderError {
        WebDAVErrors(remote: remote).transport(error, method: request, path: path)
    }

    func invalid(_ what: String, request: String, path: String, status: Int?) -> ProviderError {
        ProviderError(.invalidResponse, remote: remote, path: path, status: status, detail: "\(request): \(what)")
    }

    /// The text of `{"error": "..."}`, else the start of a text body; nil for an empty body.
    static func message(_ body: Data) -> String? {
        guard !body.isEmpty else { return nil }
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
           let text = object["error"] as? String, !text.isEmpty {
            return text
        }
        guard let s = String(data: body.prefix(200), encoding: .utf8) else { return nil }
        let plain = s.replacingOccurrences(of: "<[^>]+>", with: " ", options: .regularExpression)
            .split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return plain.isEmpty ? nil : plain
    }
}
