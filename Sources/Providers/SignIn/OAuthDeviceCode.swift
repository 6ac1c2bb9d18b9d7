import Curl
import Foundation

/// A device authorization in progress (RFC 8628): the code the user enters at the service's
/// page, and the code this process polls the token endpoint with.
public struct DeviceAuthorization: Sendable, Equatable {
    /// The code the token endpoint is polled with (never shown).
    public var deviceCode: String
    /// The code the user types at `verificationURI`.
    public var userCode: String
    /// The page where the user enters `userCode` (`https://microsoft.com/devicelogin`).
    public var verificationURI: String
    /// Seconds between polls the service asks for.
    public var interval: Double
    /// Seconds the codes are good for.
    public var expiresIn: Double
    /// What to tell the user: the service's own `message` when it gives one (Microsoft's names
    /// the page and the code, in the user's language), else one made of the two.
    public var message: String

    public init(deviceCode: String, userCode: String, verificationURI: String, interval: Double, expiresIn: Double, message: String) {
        self.deviceCode = deviceCode; self.userCode = userCode; self.verificationURI = verificationURI
        self.interval = interval; self.expiresIn = expiresIn; self.message = message
    }
}

/// The answer of one poll of the token endpoint with a device code.
public enum DevicePoll: Sendable, Equatable {
    /// The user has not finished yet (`authorization_pending`).
    case pending
    /// Polling too fast (`slow_down`): wait 5 seconds more from now on.
    case slowDown
    /// Signed in: the refresh token.
    case signedIn(String)
}

extension OAuthSignIn {
    /// The RFC 8628 grant type of a device code's token request.
    static let deviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"

    /// Asks the device authorization endpoint for codes (`client_id` and `tokenParameters`,
    /// Microsoft: the scope). Throws `.unknownApp` when the service does not know the app or
    /// does not allow it this grant (Microsoft: "Allow public client flows" off).
    public func startDeviceAuthorization(transport: CurlTransport) async throws(SignInError) -> DeviceAuthorization {
        guard let url = deviceAuthorizationURL else {
            throw SignInError(.invalidResponse, service: service, detail: "\(service) has no device code sign-in")
        }
        let items = [URLQueryItem(name: "client_id", value: clientID)] + tokenParameters
        let object: [String: Any]
        do {
            object = try await post(items, to: url, transport: transport)
        } catch {
            // Whatever the endpoint refuses here is about the app (unknown, or not a public client).
            if error.kind == .codeRefused || error.kind == .invalidResponse, error.oauthError != nil {
                throw SignInError(.unknownApp, service: service, detail: error.detail)
            }
            throw error
        }
        guard let device = object["device_code"] as? String, !device.isEmpty, let user = object["user_code"] as? String, !user.isEmpty,
              let page = (object["verification_uri"] ?? object["verification_url"]) as? String, !page.isEmpty else {
            throw SignInError(.invalidResponse, service: service, detail: "the answer of \(url) lacks device_code, user_code or verification_uri")
        }
        let interval = (object["interval"] as? NSNumber)?.doubleValue ?? 5
        let expires = (object["expires_in"] as? NSNumber)?.doubleValue ?? 900
        let message = (object["message"] as? String).flatMap { $0.isEmpty ? nil : $0 }
            ?? "To sign in, use a web browser to open the page \(page) and enter the code \(user) to authenticate."
        return DeviceAuthorization(deviceCode: device, userCode: user, verificationURI: page, interval: max(interval, 1),
                                   expiresIn: expires, message: message)
    }

    /// One poll of the token endpoint with `authorization`'s device code. Throws `.denied` when
    /// the user declined, `.timedOut` when the code expired, `.codeRefused` for a code the
    /// service does not know.
    public func pollDeviceToken(_ authorization: DeviceAuthorization, transport: CurlTransport) async throws(SignInError) -> DevicePoll {
        let items = [URLQueryItem(name: "grant_type", value: Self.deviceCodeGrant), URLQueryItem(name: "client_id", value: clientID),
                     URLQueryItem(name: "device_code", value: authorization.deviceCode)]
        let object: [String: Any]
        do {
            object = try await post(items, to: tokenURL, transport: transport)
        } catch {
            switch error.oauthError {
            case "authorization_pending": return .pending
            case "slow_down": return .slowDown
            case "authorization_declined", "access_denied":
                throw SignInError(.denied, service: service, detail: "the sign-in was declined at \(authorization.verificationURI)")
            case "expired_token":
                throw SignInError(.timedOut, service: service,
                                  detail: "the code \(authorization.userCode) expired before it was entered at \(authorization.verificationURI)")
            case "bad_verification_code":
                throw SignInError(.codeRefused, service: service, detail: error.detail)
            default: throw error
            }
        }
        guard let refresh = object["refresh_token"] as? String, !refresh.isEmpty else {
            throw SignInError(.invalidResponse, service: service, detail: "the token answer of \(tokenURL) has no refresh_token")
        }
        return .signedIn(refresh)
    }

    /// Polls until the user signs in, declines, or the code expires, at most `wait` seconds
    /// (and never past the code's `expiresIn`): every `interval` seconds, 5 more after each
    /// `slow_down`. `sleep` is the pause between polls (a test's is instant). Cancelling the
    /// task ends the wait with `.timedOut`.
    public func waitForDeviceToken(_ authorization: DeviceAuthorization, wait: Double, transport: CurlTransport,
                                   sleep: @Sendable (Double) async throws -> Void = { try await Task.sleep(nanoseconds: UInt64($0 * 1e9)) })
        async throws(SignInError) -> String {
        let limit = min(wait, authorization.expiresIn)
        let deadline = Date().addingTimeInterval(limit)
        var waited = 0.0
        var interval = authorization.interval
        while true {
            // Both the pauses (so a test's instant sleep still ends the loop) and the clock (the
            // polls' own time) count against the limit.
            guard waited + interval <= limit, Date().addingTimeInterval(interval) <= deadline else {
                throw SignInError(.timedOut, service: service,
                                  detail: "the code \(authorization.userCode) was not entered at \(authorization.verificationURI) within \(Int(limit / 60)) minutes")
            }
            do { try await sleep(interval) } catch {
                throw SignInError(.timedOut, service: service, detail: "the wait for the sign-in was cancelled")
            }
            waited += interval
            switch try await pollDeviceToken(authorization, transport: transport) {
            case .signedIn(let refresh): return refresh
            case .pending: continue
            case .slowDown: interval += 5
            }
        }
    }
}
