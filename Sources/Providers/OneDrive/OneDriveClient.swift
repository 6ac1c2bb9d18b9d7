import Curl
import FavFSCore
import Foundation

/// Where Microsoft Graph and the Microsoft identity platform's token endpoint are.
public struct OneDriveEndpoints: Sendable, Equatable {
    /// Graph's versioned root: `https://graph.microsoft.com/v1.0` (`/me/drive/root:/a:/children`, ...).
    public var graph: String
    /// The OAuth 2 token endpoint: `https://login.microsoftonline.com/common/oauth2/v2.0/token`.
    public var token: String

    /// The identity platform's consent page, beside the token endpoint
    /// (`…/common/oauth2/v2.0/authorize`).
    public var authorize: String { sibling("authorize") }
    /// The device authorization endpoint, beside the token endpoint (`…/common/oauth2/v2.0/devicecode`).
    public var deviceCode: String { sibling("devicecode") }

    private func sibling(_ name: String) -> String {
        guard let slash = token.lastIndex(of: "/") else { return name }
        return String(token[...slash]) + name
    }

    /// What a token is asked for: files, and a refresh token to go on with.
    static let scope = "offline_access Files.ReadWrite"

    /// Microsoft itself.
    public static let microsoft = OneDriveEndpoints(graph: "https://graph.microsoft.com/v1.0",
                                                    token: "https://login.microsoftonline.com/common/oauth2/v2.0/token")

    /// Both at one base URL (the `endpoint` option: a proxy or a test server): Graph under
    /// `/v1.0`, the token endpoint under `/common/oauth2/v2.0/token`, as at Microsoft.
    public init(base: String) {
        let b = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.init(graph: b + "/v1.0", token: b + "/common/oauth2/v2.0/token")
    }

    /// Each at its own URL (without a trailing slash).
    public init(graph: String, token: String) {
        self.graph = graph; self.token = token
    }
}

/// Graph's HTTP API with its authentication and its throttling: every call carries a short-lived
/// access token got from the refresh token, fetched again once when Graph answers 401; 429 and
/// 503 answers are retried after their `Retry-After`, within a bound.
final class OneDriveClient: Sendable {
    let transport: CurlTransport
    let endpoints: OneDriveEndpoints
    let errors: OneDriveErrors
    let tokens: OAuthAccessTokens
    /// The most time spent waiting for `Retry-After` in one call: no more than the transport's
    /// own patience with a stalled transfer, so a throttled call fails as a stalled one would.
    let retryBudget: Double
    /// At most this many answers of 429/503 are waited out per call.
    static let maxThrottledRetries = 4

    init(transport: CurlTransport, endpoints: OneDriveEndpoints, clientID: String, refreshToken: String,
         errors: OneDriveErrors, retryBudget: Double) {
        self.transport = transport
        self.endpoints = endpoints
        self.errors = errors
        self.retryBudget = retryBudget
        tokens = OAuthAccessTokens(transport: transport, url: endpoints.token, clientID: clientID, refreshToken: refreshToken,
                                   extraFields: [URLQueryItem(name: "scope", value: OneDriveEndpoints.scope)],
                                   requestName: "POST /oauth2/v2.0/token", errors: errors)
    }

    /// The JSON text of a request body.
    static func json(_ object: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes])) ?? Data("{}".utf8)
    }

    /// Whether `url` is at Graph (a `@odata.nextLink` or `deltaLink` must be, before the access
    /// token is sent to it).
    func isGraphURL(_ url: String) -> Bool {
        url.hasPrefix(endpoints.graph + "/")
    }

    /// A request to Graph with the bearer token, JSON in and out.
    func call(_ method: String, _ url: String, json body: Any? = nil, headers: [CurlHeader] = [],
              what: String, path: String) async throws -> CurlResponse {
        let data = body.map(Self.json)
        return try await send(what, path: path) { token in
            var all = [CurlHeader("Authorization", "Bearer \(token)")] + headers
            if data != nil { all.append(CurlHeader("Content-Type", "application/json")) }
            return try await self.transport.perform(CurlRequest(method: method, url: url, headers: all, body: data))
        }
    }

    /// Runs `attempt` with a valid access token: once more with a new token when Graph answers
    /// 401 (the token ran out or was revoked between our check and Graph's), and again after
    /// `Retry-After` for 429/503 until `retryBudget` or `maxThrottledRetries` runs out, then
    /// `.serverError`.
    func send(_ what: String, path: String, _ attempt: (String) async throws -> CurlResponse) async throws -> CurlResponse {
        try await sendThrottled(what, path: path, token: { try await self.tokens.current(path: path) },
                                refused: { self.tokens.invalidate($0) }, attempt)
    }

    /// `send` for requests that carry no token (upload session fragments, the download and
    /// copy-monitor URLs, which are pre-authenticated): throttling only.
    func sendUnauthenticated(_ what: String, path: String, _ attempt: () async throws -> CurlResponse) async throws -> CurlResponse {
        try await sendThrottled(what, path: path, token: { "" }, refused: nil) { _ in try await attempt() }
    }

    private func sendThrottled(_ what: String, path: String, token: () async throws -> String, refused: ((String) -> Void)?,
                               _ attempt: (String) async throws -> CurlResponse) async throws -> CurlResponse {
        var refreshed = false
        var throttled = 0
        var waited = 0.0
        while true {
            let current = try await token()
            let response: CurlResponse
            do {
                response = try await attempt(current)
            } catch {
                throw errors.transport(error, request: what, path: path)
            }
            switch response.status {
            case 401 where !refreshed && refused != nil:
                refreshed = true
                refused?(current)
            case 429, 503:
                let wait = OneDriveErrors.retryAfter(response)
                throttled += 1
                guard throttled <= Self.maxThrottledRetries, waited + wait <= retryBudget else {
                    throw ProviderError(.serverError, remote: errors.remote, path: path, status: response.status,
                                        detail: "\(what): OneDrive is throttling this app (\(OneDriveErrors.summary(response.body) ?? "status \(response.status)")); gave up after \(throttled) answer(s) and \(Int(waited)) s of waiting (it asked for \(Int(wait)) s more)")
                }
                waited += wait
                try await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))
            default:
                return response
            }
        }
    }
}
