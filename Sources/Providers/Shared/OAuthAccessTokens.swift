import Curl
import FavFSCore
import Foundation

/// How a cloud provider names what went wrong while getting an access token.
protocol OAuthTokenErrors: Sendable {
    /// The token endpoint could not be reached (or the request failed on the way).
    func transport(_ error: Error, request: String, path: String) -> ProviderError
    /// The token endpoint refused the refresh token (revoked, expired) or the app.
    func tokenRefused(_ response: CurlResponse, path: String) -> ProviderError
    /// An answer that is not what the endpoint documents.
    func invalid(_ what: String, request: String, path: String, status: Int?) -> ProviderError
}

/// The short-lived access token of a cloud remote (Dropbox, OneDrive), got from the refresh
/// token (the remote's secret) with the OAuth 2 `refresh_token` grant of a public client: no
/// client secret, only the app's client id.
///
/// One token is shared by every call of a provider. It is fetched when there is none, when it
/// is about to run out (`expires_in`), and when a call was refused with it (`invalidate`). A
/// service that answers with a new refresh token (Microsoft may) has it used from then on, for
/// this mount's life.
final class OAuthAccessTokens: @unchecked Sendable {
    private let transport: CurlTransport
    private let url: String
    private let clientID: String
    /// Form fields the service wants besides the grant (Microsoft: `scope`).
    private let extraFields: [URLQueryItem]
    /// How the token request is named in errors (`POST /oauth2/token`).
    private let requestName: String
    private let errors: any OAuthTokenErrors
    private let lock = NSLock()
    // Guarded by `lock`.
    private var refreshToken: String
    private var token: String?
    private var expires = Date.distantPast
    private var fetches = 0
    /// The fetch under way, which every caller without a token awaits.
    private var inflight: Task<String, Error>?

    init(transport: CurlTransport, url: String, clientID: String, refreshToken: String, extraFields: [URLQueryItem] = [],
         requestName: String, errors: any OAuthTokenErrors) {
        self.transport = transport; self.url = url; self.clientID = clientID; self.refreshToken = refreshToken
        self.extraFields = extraFields; self.requestName = requestName; self.errors = errors
    }

    /// A token to use now. Calls that find none wait for one fetch together: a mount's first
    /// burst of listings and reads must not ask for a token each.
    func current(path: String) async throws -> String {
        enum Next { case use(String), await(Task<String, Error>) }
        let next: Next = lock.withLock {
            if let token, Date() < expires { return .use(token) }
            if let inflight { return .await(inflight) }
            let fetching = Task { try await self.fetch(path: path) }
            inflight = fetching
            return .await(fetching)
        }
        switch next {
        case .use(let token): return token
        case .await(let task): return try await task.value
        }
    }

    /// Forgets `used` after the service refused it; a newer token fetched meanwhile is kept.
    func invalidate(_ used: String) {
        lock.withLock { if token == used { token = nil } }
    }

    /// Token requests that succeeded (tests: a refresh must happen once, not per call).
    var fetchCount: Int { lock.withLock { fetches } }

    private func fetch(path: String) async throws -> String {
        // Whatever the outcome, the next caller without a token starts a new fetch.
        defer { lock.withLock { inflight = nil } }
        var form = URLComponents()
        form.queryItems = [URLQueryItem(name: "grant_type", value: "refresh_token"),
                           URLQueryItem(name: "refresh_token", value: lock.withLock { refreshToken }),
                           URLQueryItem(name: "client_id", value: clientID)] + extraFields
        // URLComponents leaves '+' alone, which a form decoder reads as a space.
        let body = (form.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        let request = CurlRequest(method: "POST", url: url, headers: [CurlHeader("Content-Type", "application/x-www-form-urlencoded")],
                                  body: Data(body.utf8))
        let response: CurlResponse
        do {
            response = try await transport.perform(request)
        } catch {
            throw errors.transport(error, request: requestName, path: path)
        }
        guard response.status == 200 else { throw errors.tokenRefused(response, path: path) }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let token = object["access_token"] as? String, !token.isEmpty else {
            throw errors.invalid("the token answer has no access_token", request: requestName, path: path, status: 200)
        }
        let lifetime = (object["expires_in"] as? NSNumber)?.doubleValue ?? 3600
        // Renewed a little before the service would refuse it (a tenth of its life, at most a
        // minute), so a call rarely meets an expired token; one that does is retried by the client.
        let margin = min(60, lifetime / 10)
        lock.withLock {
            self.token = token
            self.expires = Date().addingTimeInterval(max(0, lifetime - margin))
            self.fetches += 1
            if let rotated = object["refresh_token"] as? String, !rotated.isEmpty { refreshToken = rotated }
        }
        return token
    }
}
