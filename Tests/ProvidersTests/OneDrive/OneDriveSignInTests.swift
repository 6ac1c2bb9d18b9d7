import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// OneDrive's sign-in without a terminal: Microsoft's URLs and forms, the code grant with PKCE
/// against the Graph fixture (the consent page followed with curl, as a browser would), and the
/// device code grant's polling (pending, slow_down, decline, expiry, the bounded wait).
final class OneDriveSignInTests: XCTestCase {
    private func method(_ options: [String: String]) throws -> OAuthSignIn {
        guard let method = try RemoteSignIn.method(for: RemoteConfiguration(url: try RemoteURL("onedrive:///Documents"), options: options)) else {
            throw ShellError("onedrive:// has no sign-in")
        }
        return method
    }

    func testOneDriveSignsInAtMicrosoftsURLsUnlessAnEndpointIsGiven() throws {
        let own = try method(["client_id": "APPID"])
        XCTAssertEqual(own.service, "Microsoft")
        XCTAssertEqual(own.authorizeURL, "https://login.microsoftonline.com/common/oauth2/v2.0/authorize")
        XCTAssertEqual(own.tokenURL, "https://login.microsoftonline.com/common/oauth2/v2.0/token")
        XCTAssertEqual(own.deviceAuthorizationURL, "https://login.microsoftonline.com/common/oauth2/v2.0/devicecode")
        XCTAssertEqual(own.redirectURI(port: 53682), "http://localhost:53682/", "Microsoft allows any port on http://localhost only")
        let pkce = PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        XCTAssertEqual(own.authorizationURL(pkce: pkce, state: "s1", redirectURI: own.redirectURI(port: 53682)),
                       "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=APPID&response_type=code"
                       + "&scope=offline_access%20Files.ReadWrite"
                       + "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
                       + "&redirect_uri=http%3A%2F%2Flocalhost%3A53682%2F&state=s1")
        XCTAssertEqual(own.tokenParameters, [URLQueryItem(name: "scope", value: "offline_access Files.ReadWrite")])

        let test = try method(["client_id": "APPID", "endpoint": "http://127.0.0.1:9/"])
        XCTAssertEqual(test.authorizeURL, "http://127.0.0.1:9/common/oauth2/v2.0/authorize")
        XCTAssertEqual(test.tokenURL, "http://127.0.0.1:9/common/oauth2/v2.0/token")
        XCTAssertEqual(test.deviceAuthorizationURL, "http://127.0.0.1:9/common/oauth2/v2.0/devicecode")

        XCTAssertThrowsError(try method([:])) { error in XCTAssertTrue("\(error)".contains("client_id"), "\(error)") }
        XCTAssertThrowsError(try method(["client_id": "APPID", "endpoint": "ftp://x"])) { error in
            XCTAssertTrue("\(error)".contains("endpoint"), "\(error)")
        }
        // Dropbox keeps its 127.0.0.1 redirect and its pasted code.
        let dropbox = try XCTUnwrap(try RemoteSignIn.method(for: RemoteConfiguration(url: try RemoteURL("dropbox:///"), options: ["client_id": "K"])))
        XCTAssertEqual(dropbox.redirectURI(port: 1), "http://127.0.0.1:1/")
        XCTAssertNil(dropbox.deviceAuthorizationURL)
    }

    /// The code the fixture's consent page redirects with, for `redirectURI`.
    private func code(_ method: OAuthSignIn, _ pkce: PKCE, redirectURI: String) throws -> String {
        let url = method.authorizationURL(pkce: pkce, state: "st", redirectURI: redirectURI)
        let r = try TimedProcess.run("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{redirect_url}", url], timeout: 20)
        let location = try XCTUnwrap(URLComponents(string: r.stdout), "\(r)")
        XCTAssertEqual(location.queryItems?.first { $0.name == "state" }?.value, "st")
        return try XCTUnwrap(location.queryItems?.first { $0.name == "code" }?.value, "\(r)")
    }

    /// A code is redeemed with its verifier and its redirect URI only, once; the refresh token
    /// it gives works for Graph.
    func testACodeIsRedeemedOnlyWithItsVerifierAndRedirectAndOnlyOnce() async throws {
        let s = try OneDriveServer.started()
        addTeardownBlock { s.remove() }
        let method = try method(["client_id": s.clientID, "endpoint": s.endpoint])
        let transport = CurlTransport()
        let redirect = method.redirectURI(port: 40001)
        let pkce = PKCE()
        let first = try code(method, pkce, redirectURI: redirect), second = try code(method, pkce, redirectURI: redirect)
        do {
            _ = try await method.redeem(code: first, pkce: PKCE(), redirectURI: redirect, transport: transport)
            XCTFail("a wrong verifier was taken")
        } catch { XCTAssertEqual(error.kind, .codeRefused, "\(error)") }
        do {
            _ = try await method.redeem(code: second, pkce: pkce, redirectURI: method.redirectURI(port: 40002), transport: transport)
            XCTFail("another redirect URI was taken")
        } catch { XCTAssertEqual(error.kind, .codeRefused, "\(error)") }
        let good = try code(method, pkce, redirectURI: redirect)
        let refresh = try await method.redeem(code: good, pkce: pkce, redirectURI: redirect, transport: transport)
        XCTAssertTrue(refresh.hasPrefix("fixture-issued-"), refresh)
        do {
            _ = try await method.redeem(code: good, pkce: pkce, redirectURI: redirect, transport: transport)
            XCTFail("a code was taken twice")
        } catch { XCTAssertEqual(error.kind, .codeRefused, "\(error)") }
        let p = try ProviderFactory.make(RemoteConfiguration(url: try RemoteURL("onedrive:///"), options: ["client_id": s.clientID, "endpoint": s.endpoint],
                                                             secret: refresh), transport: TransportOptions())
        _ = try await p.enumerateItems(in: .rootContainer, page: nil)
    }

    /// Pauses a device poll loop asked for, without waiting them.
    private final class Pauses: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [Double] = []
        var all: [Double] { lock.withLock { list } }
        func sleep(_ seconds: Double) { lock.withLock { list.append(seconds) } }
    }

    /// slow_down adds 5 seconds to the interval; pending polls go on; then a working token.
    func testTheDeviceCodeIsPolledAtItsIntervalHonouringSlowDown() async throws {
        var settings = OneDriveServer.Settings()
        settings.deviceInterval = 2; settings.deviceSlowDown = 1; settings.devicePending = 2
        let s = try OneDriveServer.started(settings)
        addTeardownBlock { s.remove() }
        let method = try method(["client_id": s.clientID, "endpoint": s.endpoint])
        let transport = CurlTransport()
        let authorization = try await method.startDeviceAuthorization(transport: transport)
        XCTAssertEqual(authorization.interval, 2)
        XCTAssertEqual(authorization.verificationURI, s.endpoint + "/devicelogin")
        XCTAssertTrue(authorization.message.contains(authorization.userCode) && authorization.message.contains(authorization.verificationURI),
                      authorization.message)
        let pauses = Pauses()
        let refresh = try await method.waitForDeviceToken(authorization, wait: 300, transport: transport) { pauses.sleep($0) }
        XCTAssertEqual(pauses.all, [2, 7, 7, 7], "one slow_down (+5 s), two pending, then the token")
        XCTAssertTrue(refresh.hasPrefix("fixture-issued-"), refresh)
        let p = try ProviderFactory.make(RemoteConfiguration(url: try RemoteURL("onedrive:///"), options: ["client_id": s.clientID, "endpoint": s.endpoint],
                                                             secret: refresh), transport: TransportOptions())
        _ = try await p.enumerateItems(in: .rootContainer, page: nil)
    }

    func testADeclinedOrExpiredDeviceCodeOrAnEndedWaitSaysSo() async throws {
        var settings = OneDriveServer.Settings()
        settings.deviceOutcome = .decline
        let s = try OneDriveServer.started(settings)
        addTeardownBlock { s.remove() }
        let method = try method(["client_id": s.clientID, "endpoint": s.endpoint])
        let transport = CurlTransport()
        func attempt(wait: Double = 300) async -> SignInError? {
            do {
                let authorization = try await method.startDeviceAuthorization(transport: transport)
                _ = try await method.waitForDeviceToken(authorization, wait: wait, transport: transport) { _ in }
                return nil
            } catch { return error }
        }
        let declined = await attempt()
        XCTAssertEqual(declined?.kind, .denied, "\(String(describing: declined))")
        try s.device(outcome: .expire, pending: 0)
        let expired = await attempt()
        XCTAssertEqual(expired?.kind, .timedOut)
        XCTAssertTrue(expired?.detail.contains("expired") == true, "\(String(describing: expired))")
        try s.device(outcome: .approve, pending: 1000)
        let waited = await attempt(wait: 10)
        XCTAssertEqual(waited?.kind, .timedOut)
        XCTAssertTrue(waited?.detail.contains("was not entered") == true, "\(String(describing: waited))")
        XCTAssertEqual(s.requests("\"POST /common/oauth2/v2.0/token HTTP/1.1\" 400"), 3 + 1 + 10,
                       "2 pending and the decline, the expiry, then the wait of 10 s at 1 s: 10 polls, no more")

        let stranger = try self.method(["client_id": "not-the-app", "endpoint": s.endpoint])
        do {
            _ = try await stranger.startDeviceAuthorization(transport: transport)
            XCTFail("an unknown app got a device code")
        } catch { XCTAssertEqual(error.kind, .unknownApp, "\(error)") }
    }
}
