import Curl
import FavFSCore
import Foundation

/// The short-lived access token, got from the refresh token (the remote's secret) with the
/// OAuth 2 `refresh_token` grant of a public client (no client secret, as for PKCE apps).
///
/// One token is shared by every call of a provider. It is fetched when there is none, when it
/// is about to run out (`expires_in`), and when a call was refused with it (`invalidate`).
/// Microsoft may answer with a new refresh token: the newest is used from then on, for this
/// mount's life (the stored one stays valid until it expires by itself).
final class OneDriveTokens: @unchecked Sendable {
    /// What the token is asked for: files, and a refresh token to go on with.
    static let scope = "offline_access Files.ReadWrite"
    private let transport: CurlTransport
    private let url: String
    private let clientID: String
    private let errors: OneDriveErrors
    private let lock = NSLock()
    // Guarded by `lock`.
    private var refreshToken: String
    private var token: String?
    private var expires = Date.distantPast
    private var fetches = 0
    /// The fetch under way, which every caller without a token awaits.
    private var inflight: Task<String, Error>?

    init(transport: CurlTransport, url: String, clientID: String, refreshToken: String, errors: OneDriveErrors) {
        self.transport = transport; self.url = url; self.clientID = clientID; self.refreshToken = refreshToken; self.errors = errors
    }

    /// A token to use now. Calls that find none wait for one fetch together.
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

    /// Forgets `used` after Graph refused it; a newer token fetched meanwhile is kept.
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
                           URLQueryItem(name: "client_id", value: clientID),
                           URLQueryItem(name: "scope", value: Self.scope)]
        // URLComponents leaves '+' alone, which a form decoder reads as a space.
        let body = (form.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        let request = CurlRequest(method: "POST", url: url, headers: [CurlHeader("Content-Type", "application/x-www-form-urlencoded")],
                                  body: Data(body.utf8))
        let response: CurlResponse
        do {
            response = try await transport.perform(request)
        } catch {
            throw errors.transport(error, request: "POST /oauth2/v2.0/token", path: path)
        }
        guard response.status == 200 else { throw errors.tokenRefused(response, path: path) }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let token = object["access_token"] as? String, !token.isEmpty else {
            throw errors.invalid("the token answer has no access_token", request: "POST /oauth2/v2.0/token", path: path, status: 200)
        }
        let lifetime = (object["expires_in"] as? NSNumber)?.doubleValue ?? 3600
        // Renewed a little before Graph would refuse it (a tenth of its life, at most a minute),
        // so a call rarely meets an expired token; one that does is retried (`OneDriveClient.send`).
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
