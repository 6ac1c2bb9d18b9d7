import Curl
import FavFSCore
import Foundation

/// Graph answers and transport failures → `ProviderError`, naming the remote, the path, the
/// request and Graph's reason: the error resource `{"error": {"code": "itemNotFound",
/// "message": "..."}}`, whose `code` (and the `innerError` chain's) says what happened.
struct OneDriveErrors: OAuthTokenErrors {
    let remote: String

    /// The error codes of a body, outermost first (`["invalidRequest", "nameAlreadyExists"]`).
    static func codes(_ body: Data) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return [] }
        var codes: [String] = []
        var node = object["error"] as? [String: Any]
        while let current = node {
            if let code = current["code"] as? String { codes.append(code) }
            node = (current["innererror"] as? [String: Any]) ?? (current["innerError"] as? [String: Any])
        }
        return codes
    }

    /// `code: message`, or the start of a text body.
    static func summary(_ body: Data) -> String? {
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
           let error = object["error"] as? [String: Any] {
            let code = codes(body).joined(separator: "/")
            let message = error["message"] as? String ?? ""
            return message.isEmpty ? code : "\(code): \(message)"
        }
        guard !body.isEmpty, let text = String(data: body.prefix(300), encoding: .utf8) else { return nil }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// Seconds to wait from `Retry-After`; 1 when it does not say (Graph always should).
    static func retryAfter(_ response: CurlResponse) -> Double {
        if let value = response.headers["retry-after"].flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }), value >= 0 {
            return value
        }
        return 1
    }

    /// The kind an answer stands for: the most specific error code first, then the status.
    static func kind(status: Int, codes: [String]) -> ProviderError.Kind {
        let set = Set(codes)
        if set.contains("resyncRequired") { return .versionChanged }
        if set.contains("nameAlreadyExists") { return .exists }
        if set.contains("itemNotFound") { return .notFound }
        if set.contains("quotaLimitReached") || set.contains("insufficientStorage") { return .noSpace }
        if set.contains("accessDenied") || set.contains("unauthenticated") { return .denied }
        if set.contains("resourceModified") { return .versionChanged }
        if set.contains("notAllowed") || set.contains("notSupported") { return .notSupported }
        if set.contains("invalidRange") { return .invalidResponse }
        switch status {
        case 404: return .notFound
        case 409: return .exists
        case 412: return .versionChanged
        case 401, 403: return .denied
        case 405, 501: return .notSupported
        case 410: return .versionChanged
        case 413: return .tooLarge
        case 423: return .locked
        case 507: return .noSpace
        case 400: return .invalidResponse
        default: return .serverError
        }
    }

    /// An error for a non-success answer to `what` about `path`; `meaning` overrides the kind
    /// of one code for one request.
    func status(_ response: CurlResponse, what: String, path: String, meaning: [String: ProviderError.Kind] = [:]) -> ProviderError {
        let status = response.status
        let codes = Self.codes(response.body)
        var kind = Self.kind(status: status, codes: codes)
        for code in codes.reversed() { if let k = meaning[code] { kind = k; break } }
        var detail = "\(what) failed: \(status) \(WebDAVErrors.reason(status))"
        if let summary = Self.summary(response.body) { detail += " — \(summary)" }
        if status == 401 { detail += " (the access token was refused even after a new one was fetched)" }
        return ProviderError(kind, remote: remote, path: path, status: status, detail: detail)
    }

    /// The token endpoint's refusal (`{"error": "invalid_grant", "error_description": "AADSTS…"}`).
    /// `invalid_grant`: the refresh token expired, was revoked or is not one: only signing in
    /// again makes a new one.
    func tokenRefused(_ response: CurlResponse, path: String) -> ProviderError {
        let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        let code = object?["error"] as? String ?? ""
        let description = (object?["error_description"] as? String).map { $0.split(whereSeparator: \.isNewline).joined(separator: " ") }
            ?? Self.summary(response.body) ?? ""
        let said = code.isEmpty ? description : "\(code): \(description)"
        switch code {
        case "invalid_grant":
            return ProviderError(.denied, remote: remote, path: path, status: response.status,
                                 detail: "Microsoft refused the refresh token (\(said)): it expired, was revoked or is not valid; sign in again (favfs remote add NAME URL --option client_id=ID --force; docs/remotes.md, \"OneDrive: signing in\")")
        case "invalid_client", "unauthorized_client":
            return ProviderError(.denied, remote: remote, path: path, status: response.status,
                                 detail: "Microsoft does not know the application given as client_id (\(said)); use the Application (client) ID of the app the refresh token was issued to")
        default:
            let kind: ProviderError.Kind = response.status >= 500 || response.status == 429 ? .serverError : .denied
            return ProviderError(kind, remote: remote, path: path, status: response.status,
                                 detail: "POST /oauth2/v2.0/token failed: \(response.status) \(WebDAVErrors.reason(response.status))\(said.isEmpty ? "" : " — " + said)")
        }
    }

    func transport(_ error: Error, request: String, path: String) -> ProviderError {
        WebDAVErrors(remote: remote).transport(error, method: request, path: path)
    }

    func invalid(_ what: String, request: String, path: String, status: Int?) -> ProviderError {
        ProviderError(.invalidResponse, remote: remote, path: path, status: status, detail: "\(request): \(what)")
    }
}
