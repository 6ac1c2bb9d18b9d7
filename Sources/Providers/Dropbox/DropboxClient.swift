import Curl
import FavFSCore
import Foundation

/// Where Dropbox's kinds of endpoint are: RPC (`api`), content (`content`), OAuth (`token`)
/// and change notifications (`notify`).
public struct DropboxEndpoints: Sendable, Equatable {
    /// RPC endpoints: `https://api.dropboxapi.com` (`/2/files/list_folder`, ...).
    public var api: String
    /// Content endpoints: `https://content.dropboxapi.com` (`/2/files/download`, `/upload`).
    public var content: String
    /// The OAuth 2 token endpoint: `https://api.dropboxapi.com/oauth2/token`.
    public var token: String
    /// The long-poll endpoint (`/2/files/list_folder/longpoll`): `https://notify.dropboxapi.com`.
    public var notify: String

    /// Dropbox itself.
    public static let dropbox = DropboxEndpoints(api: "https://api.dropboxapi.com", content: "https://content.dropboxapi.com",
                                                 token: "https://api.dropboxapi.com/oauth2/token",
                                                 notify: "https://notify.dropboxapi.com")

    /// Everything at one base URL (the `endpoint` option: a proxy or a test server).
    public init(base: String) {
        let b = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.init(api: b, content: b, token: b + "/oauth2/token", notify: b)
    }

    /// Each endpoint at its own base URL (without a trailing slash; `token` is the full URL).
    public init(api: String, content: String, token: String, notify: String = "https://notify.dropboxapi.com") {
        self.api = api; self.content = content; self.token = token; self.notify = notify
    }
}

/// Dropbox's HTTP API with its authentication and its rate limits: every call carries a
/// short-lived access token got from the refresh token, fetched again once when Dropbox says it
/// expired; 429 and 503 answers are retried after their `Retry-After`, within a bound.
final class DropboxClient: Sendable {
    let transport: CurlTransport
    let endpoints: DropboxEndpoints
    let errors: DropboxErrors
    let tokens: OAuthAccessTokens
    /// The most time spent waiting for `Retry-After` in one call: no more than the transport's
    /// own patience with a stalled transfer, so a throttled call fails as a stalled one would.
    let retryBudget: Double
    /// At most this many answers of 429/503 are waited out per call.
    static let maxThrottledRetries = 4

    init(transport: CurlTransport, endpoints: DropboxEndpoints, clientID: String, refreshToken: String,
         errors: DropboxErrors, retryBudget: Double) {
        self.transport = transport
        self.endpoints = endpoints
        self.errors = errors
        self.retryBudget = retryBudget
        tokens = OAuthAccessTokens(transport: transport, url: endpoints.token, clientID: clientID, refreshToken: refreshToken,
                                   requestName: "POST /oauth2/token", errors: errors)
    }

    /// The JSON text of an argument. For the `Dropbox-API-Arg` header every character outside
    /// ASCII, and DEL, is escaped as `\uXXXX`, as the documentation asks of header arguments.
    static func json(_ object: Any, forHeader: Bool = false) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed, .withoutEscapingSlashes]),
              let text = String(data: data, encoding: .utf8) else { return "null" }
        guard forHeader else { return text }
        var out = ""
        for unit in text.utf16 {
            if unit < 0x7F { out.unicodeScalars.append(Unicode.Scalar(UInt8(unit))) } else { out += String(format: "\\u%04x", unit) }
        }
        return out
    }

    /// An RPC call: `POST api/2/<route>` with a JSON body. Returns the answer, whatever its
    /// status once authentication and throttling are dealt with.
    func rpc(_ route: String, _ argument: Any?, path: String) async throws -> CurlResponse {
        let body = Data(Self.json(argument ?? NSNull()).utf8)
        return try await send(route, path: path) { token in
            let request = CurlRequest(method: "POST", url: self.endpoints.api + "/2/" + route,
                                      headers: [CurlHeader("Authorization", "Bearer \(token)"), CurlHeader("Content-Type", "application/json")],
                                      body: body)
            return try await self.transport.perform(request)
        }
    }

    /// A content call's request: `POST content/2/<route>` with the argument in `Dropbox-API-Arg`.
    func contentRequest(_ route: String, _ argument: Any, token: String, headers: [CurlHeader] = []) -> CurlRequest {
        CurlRequest(method: "POST", url: endpoints.content + "/2/" + route,
                    headers: [CurlHeader("Authorization", "Bearer \(token)"), CurlHeader("Dropbox-API-Arg", Self.json(argument, forHeader: true))] + headers)
    }

    /// Runs `attempt` with a valid access token: once more with a new token when Dropbox answers
    /// 401 `expired_access_token` (or `invalid_access_token`: a token revoked meanwhile), and
    /// again after `Retry-After` for 429/503 until `retryBudget` or `maxThrottledRetries` runs
    /// out, then `.serverError`.
    func send(_ route: String, path: String, _ attempt: (String) async throws -> CurlResponse) async throws -> CurlResponse {
        var refreshed = false
        var throttled = 0
        var waited = 0.0
        while true {
            let token = try await tokens.current(path: path)
            let response: CurlResponse
            do {
                response = try await attempt(token)
            } catch {
                throw errors.transport(error, request: route, path: path)
            }
            switch response.status {
            case 401 where !refreshed && DropboxErrors.isTokenProblem(response.body):
                // The token ran out (or was revoked) between our check and Dropbox's: one new one.
                refreshed = true
                tokens.invalidate(token)
            case 429, 503:
                let wait = DropboxErrors.retryAfter(response)
                throttled += 1
                guard throttled <= Self.maxThrottledRetries, waited + wait <= retryBudget else {
                    throw ProviderError(.serverError, remote: errors.remote, path: path, status: response.status,
                                        detail: "\(route): Dropbox is throttling this app (\(DropboxErrors.summary(response.body) ?? "status \(response.status)")); gave up after \(throttled) answer(s) and \(Int(waited)) s of waiting (it asked for \(Int(wait)) s more)")
                }
                waited += wait
                try await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))
            default:
                return response
            }
        }
    }
}
