import Curl
import FavFSCore
import Foundation

/// Dropbox answers and transport failures → `ProviderError`, naming the remote, the path, the
/// route and Dropbox's reason (`error_summary`, e.g. `path/conflict/file/..`).
///
/// A route error is a 409 whose `error` is a union (`{".tag": "path", "path": {".tag":
/// "not_found"}}`); its chain of tags says what happened. 400 is a request Dropbox could not
/// take (text), 401 an authentication problem, 429 and 503 "later" (`DropboxClient.send`).
struct DropboxErrors: OAuthTokenErrors {
    let remote: String
    /// The command that signs in again (`favfs remote add NAME dropbox:///… --force`).
    var signInCommand = "favfs remote add NAME dropbox:///PATH --option client_id=KEY --force"

    /// The chain of `.tag`s of a route error, outermost first (`["path", "conflict", "file"]`);
    /// from `error_summary` when the `error` object is missing.
    static func tags(_ body: Data) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return [] }
        var tags: [String] = []
        var node = object["error"] as? [String: Any]
        while let current = node, let tag = current[".tag"] as? String {
            tags.append(tag)
            // A union member's value is under its tag; a struct member's fields are inline
            // (UploadWriteFailed keeps its WriteError under "reason").
            node = (current[tag] as? [String: Any]) ?? (current["reason"] as? [String: Any])
        }
        if tags.isEmpty, let summary = object["error_summary"] as? String {
            tags = summary.split(separator: "/").map(String.init).filter { !$0.hasPrefix(".") && !$0.isEmpty }
        }
        return tags
    }

    /// `error_summary`, or the start of a text body.
    static func summary(_ body: Data) -> String? {
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
           let summary = object["error_summary"] as? String { return summary }
        guard !body.isEmpty, let text = String(data: body.prefix(300), encoding: .utf8) else { return nil }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// True when a 401 says the access token is at fault (not the app's permissions).
    static func isTokenProblem(_ body: Data) -> Bool {
        let tags = tags(body)
        return tags.contains("expired_access_token") || tags.contains("invalid_access_token")
    }

    /// Seconds to wait from `Retry-After` (or the body's `retry_after`); 1 when neither says.
    static func retryAfter(_ response: CurlResponse) -> Double {
        if let value = response.headers["retry-after"].flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }), value >= 0 {
            return value
        }
        if let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
           let error = object["error"] as? [String: Any], let after = error["retry_after"] as? NSNumber {
            return max(0, after.doubleValue)
        }
        return 1
    }

    /// The kind a route error's tags stand for. `meaning` overrides a tag for one request
    /// (an upload in `update` mode: `conflict` is `.versionChanged`).
    static func kind(_ tags: [String], meaning: [String: ProviderError.Kind] = [:]) -> ProviderError.Kind {
        for tag in tags.reversed() { if let kind = meaning[tag] { return kind } }
        let set = Set(tags)
        if set.contains("not_found") { return .notFound }
        if set.contains("not_folder") { return .notAFolder }
        if set.contains("not_file") { return .isAFolder }
        if set.contains("malformed_path") || set.contains("disallowed_name") || set.contains("cant_move_folder_into_itself") { return .invalidName }
        if set.contains("file_ancestor") { return .notAFolder }
        if set.contains("conflict") { return .exists }
        if set.contains("insufficient_space") || set.contains("insufficient_quota") { return .noSpace }
        if set.contains("payload_too_large") || set.contains("too_large") { return .tooLarge }
        if !set.isDisjoint(with: ["no_write_permission", "access_restricted", "restricted_content", "team_folder", "operation_suppressed"]) { return .denied }
        if set.contains("locked") || set.contains("too_many_write_operations") { return .locked }
        return .serverError
    }

    /// An error for a non-success answer to `route` about `path`.
    func status(_ response: CurlResponse, route: String, path: String, meaning: [String: ProviderError.Kind] = [:]) -> ProviderError {
        let status = response.status
        let kind: ProviderError.Kind
        switch status {
        case 409: kind = Self.kind(Self.tags(response.body), meaning: meaning)
        case 401, 403: kind = .denied
        case 400: kind = .invalidResponse
        case 507: kind = .noSpace
        default: kind = .serverError
        }
        var detail = "\(route) failed: \(status) \(WebDAVErrors.reason(status))"
        if let summary = Self.summary(response.body) { detail += " — \(summary)" }
        if status == 401 {
            detail += Self.isTokenProblem(response.body) ? " (the access token was refused even after a new one was fetched)" : ""
        }
        return ProviderError(kind, remote: remote, path: path, status: status, detail: detail)
    }

    /// The token endpoint's refusal. `invalid_grant`: the refresh token was revoked (the user
    /// disconnected the app) or is not one: only signing in again makes a new one.
    func tokenRefused(_ response: CurlResponse, path: String) -> ProviderError {
        let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        let code = object?["error"] as? String ?? ""
        let description = object?["error_description"] as? String ?? Self.summary(response.body) ?? ""
        let said = code.isEmpty ? description : "\(code): \(description)"
        switch code {
        case "invalid_grant":
            return ProviderError(.denied, remote: remote, path: path, status: response.status,
                                 detail: "Dropbox refused the refresh token (\(said)): it was revoked or is not valid; sign in again: \(signInCommand) (docs/remotes.md, \"Dropbox: signing in\")")
        case "invalid_client", "unauthorized_client":
            return ProviderError(.denied, remote: remote, path: path, status: response.status,
                                 detail: "Dropbox does not know the app key given as client_id (\(said)); use the key of the app the refresh token was issued to")
        default:
            // Throttled or failing: try again later; anything else is a refusal.
            let kind: ProviderError.Kind = response.status >= 500 || response.status == 429 ? .serverError : .denied
            return ProviderError(kind, remote: remote, path: path, status: response.status,
                                 detail: "POST /oauth2/token failed: \(response.status) \(WebDAVErrors.reason(response.status))\(said.isEmpty ? "" : " — " + said)")
        }
    }

    func transport(_ error: Error, request: String, path: String) -> ProviderError {
        WebDAVErrors(remote: remote).transport(error, method: request, path: path)
    }

    func invalid(_ what: String, request: String, path: String, status: Int?) -> ProviderError {
        ProviderError(.invalidResponse, remote: remote, path: path, status: status, detail: "\(request): \(what)")
    }
}
