import Curl
import FavFSCore
import Foundation

/// How one kind of remote signs a user in with OAuth 2's authorization code grant and PKCE
/// (RFC 7636, `S256`): where its consent page and token endpoint are, the app's id (a public
/// client: no secret), and the service's own parameters. What a sign-in yields is a refresh
/// token, the remote's secret. A service whose consent page shows no code to paste also has a
/// device code grant (`OAuthDeviceCode.swift`). The interactive part (a browser, a pasted code) is the
/// command line's; see `RemoteSignIn` for the remotes that have one.
public struct OAuthSignIn: Sendable {
    /// The service's name, for messages ("Dropbox").
    public var service: String
    /// The consent page (`https://www.dropbox.com/oauth2/authorize`).
    public var authorizeURL: String
    /// The token endpoint (`https://api.dropboxapi.com/oauth2/token`).
    public var tokenURL: String
    /// The app's id (Dropbox: the app key).
    public var clientID: String
    /// The service's own parameters of the consent page (Dropbox: `token_access_type=offline`,
    /// without which no refresh token is issued).
    public var authorizeParameters: [URLQueryItem]
    /// The service's own fields of every token request (Microsoft: `scope`).
    public var tokenParameters: [URLQueryItem]
    /// The host the loopback redirect URI names: `127.0.0.1`, or `localhost` for a service
    /// that only allows any port on a redirect registered as `http://localhost` (Microsoft).
    /// The listener is on 127.0.0.1 either way.
    public var loopbackHost: String
    /// The device authorization endpoint (RFC 8628), for a service whose consent page cannot
    /// show a code to paste (Microsoft): without a desktop the sign-in is by device code. Nil:
    /// without a desktop the user pastes the code the consent page shows (Dropbox).
    public var deviceAuthorizationURL: String?

    public init(service: String, authorizeURL: String, tokenURL: String, clientID: String, authorizeParameters: [URLQueryItem] = [],
                tokenParameters: [URLQueryItem] = [], loopbackHost: String = "127.0.0.1", deviceAuthorizationURL: String? = nil) {
        self.service = service; self.authorizeURL = authorizeURL; self.tokenURL = tokenURL
        self.clientID = clientID; self.authorizeParameters = authorizeParameters
        self.tokenParameters = tokenParameters; self.loopbackHost = loopbackHost; self.deviceAuthorizationURL = deviceAuthorizationURL
    }

    /// The redirect URI of a loopback listener on `port`.
    public func redirectURI(port: Int) -> String { "http://\(loopbackHost):\(port)/" }

    /// The consent page's URL. Without `redirectURI` the service shows the code for the user
    /// to paste (a machine without a desktop); `state` ties a redirect to this sign-in.
    public func authorizationURL(pkce: PKCE, state: String?, redirectURI: String?) -> String {
        var items = [URLQueryItem(name: "client_id", value: clientID), URLQueryItem(name: "response_type", value: "code")]
        items += authorizeParameters
        items += [URLQueryItem(name: "code_challenge", value: pkce.challenge), URLQueryItem(name: "code_challenge_method", value: "S256")]
        if let redirectURI { items.append(URLQueryItem(name: "redirect_uri", value: redirectURI)) }
        if let state { items.append(URLQueryItem(name: "state", value: state)) }
        return authorizeURL + (authorizeURL.contains("?") ? "&" : "?") + Self.form(items)
    }

    /// Trades the code of a consent for a refresh token (`grant_type=authorization_code` with
    /// the PKCE verifier; `redirect_uri` exactly when the consent page was given one).
    public func redeem(code: String, pkce: PKCE, redirectURI: String?, transport: CurlTransport) async throws(SignInError) -> String {
        var items = [URLQueryItem(name: "grant_type", value: "authorization_code"), URLQueryItem(name: "code", value: code),
                     URLQueryItem(name: "code_verifier", value: pkce.verifier), URLQueryItem(name: "client_id", value: clientID)]
        if let redirectURI { items.append(URLQueryItem(name: "redirect_uri", value: redirectURI)) }
        items += tokenParameters
        let object = try await post(items, to: tokenURL, transport: transport)
        guard let refresh = object["refresh_token"] as? String, !refresh.isEmpty else {
            throw SignInError(.invalidResponse, service: service, detail: "the token answer of \(tokenURL) has no refresh_token")
        }
        return refresh
    }

    /// POSTs `items` as a form to `url` (the token endpoint, the device authorization
    /// endpoint); the JSON object of a 200 answer, else the error the service named
    /// (`invalid_grant`: the code is refused), its code in `oauthError`.
    func post(_ items: [URLQueryItem], to url: String, transport: CurlTransport) async throws(SignInError) -> [String: Any] {
        let request = CurlRequest(method: "POST", url: url, headers: [CurlHeader("Content-Type", "application/x-www-form-urlencoded")],
                                  body: Data(Self.form(items).utf8))
        let response: CurlResponse
        do {
            response = try await transport.perform(request)
        } catch {
            throw SignInError(.unreachable, service: service, detail: "POST \(url): \(error)")
        }
        let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        guard response.status == 200 else {
            let code = object?["error"] as? String ?? ""
            let description = object?["error_description"] as? String ?? String(decoding: response.body.prefix(300), as: UTF8.self)
            let kind: SignInError.Kind = code == "invalid_grant" ? .codeRefused : code == "invalid_client" || code == "unauthorized_client" ? .unknownApp : .invalidResponse
            var error = SignInError(kind, service: service, detail: "POST \(url) answered \(response.status)\(code.isEmpty ? "" : " \(code)"): \(description)")
            error.oauthError = code.isEmpty ? nil : code
            throw error
        }
        guard let object else {
            throw SignInError(.invalidResponse, service: service, detail: "the answer of \(url) is not a JSON object")
        }
        return object
    }

    /// `application/x-www-form-urlencoded` text of `items`, everything but RFC 3986's
    /// unreserved characters escaped (a redirect URI's ':' and '/' too, as services expect).
    static func form(_ items: [URLQueryItem]) -> String {
        var unreserved = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        unreserved.insert(charactersIn: "-._~")
        func escape(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "" }
        return items.map { escape($0.name) + "=" + escape($0.value ?? "") }.joined(separator: "&")
    }
}

/// A PKCE pair: a random verifier kept here, and its SHA-256 (base64url, unpadded) sent to the
/// consent page, so that only this process can redeem the code.
public struct PKCE: Sendable {
    public let verifier: String
    public var challenge: String { PKCE.base64URL(SHA256.digest(Array(verifier.utf8))) }

    /// A new verifier: 48 random bytes, 64 characters of base64url (RFC 7636 asks 43...128).
    public init() { verifier = PKCE.randomToken(bytes: 48) }

    public init(verifier: String) { self.verifier = verifier }

    /// `bytes` random bytes as base64url text (a verifier, a `state`).
    public static func randomToken(bytes: Int) -> String {
        var g = SystemRandomNumberGenerator()
        return base64URL((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &g) })
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Why a sign-in did not give a refresh token.
public struct SignInError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// The user said no on the consent page (`error=access_denied`).
        case denied
        /// No answer within the wait, or a device code ran out (`expired_token`).
        case timedOut
        /// The token endpoint refused the code (expired, used, or the verifier or redirect differ).
        case codeRefused
        /// The service does not know the app id.
        case unknownApp
        /// The token endpoint could not be reached.
        case unreachable
        /// An answer that is not what OAuth says (a redirect with another `state`, no refresh token).
        case invalidResponse
    }

    public let kind: Kind
    public let service: String
    public let detail: String
    /// The OAuth `error` code the service answered (`invalid_grant`, `authorization_pending`), if any.
    public var oauthError: String?

    public init(_ kind: Kind, service: String, detail: String) {
        self.kind = kind; self.service = service; self.detail = detail
    }

    public var description: String { "signing in to \(service) failed: \(detail)" }
}
