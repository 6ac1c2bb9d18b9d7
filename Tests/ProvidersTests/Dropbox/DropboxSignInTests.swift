import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// The OAuth sign-in's pieces without a browser: PKCE, Dropbox's URLs, and the code grant
/// against the API fixture (the consent page fetched with curl, as `favfs remote add`'s user
/// would open it).
final class DropboxSignInTests: XCTestCase {
    /// RFC 7636, appendix B.
    func testThePKCEChallengeIsTheS256OfTheVerifier() {
        XCTAssertEqual(PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk").challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let made = PKCE()
        XCTAssertEqual(made.verifier.count, 64)
        XCTAssertNotEqual(made.verifier, PKCE().verifier)
    }

    func testDropboxSignsInAtItsOwnURLsUnlessAnEndpointIsGiven() throws {
        let url = try RemoteURL("dropbox:///Work")
        let own = try XCTUnwrap(try RemoteSignIn.method(for: RemoteConfiguration(url: url, options: ["client_id": "KEY"])))
        XCTAssertEqual(own.authorizeURL, "https://www.dropbox.com/oauth2/authorize")
        XCTAssertEqual(own.tokenURL, "https://api.dropboxapi.com/oauth2/token")
        let pkce = PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        XCTAssertEqual(own.authorizationURL(pkce: pkce, state: "s1", redirectURI: "http://127.0.0.1:53682/"),
                       "https://www.dropbox.com/oauth2/authorize?client_id=KEY&response_type=code&token_access_type=offline"
                       + "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
                       + "&redirect_uri=http%3A%2F%2F127.0.0.1%3A53682%2F&state=s1")
        XCTAssertFalse(own.authorizationURL(pkce: pkce, state: nil, redirectURI: nil).contains("redirect_uri"))

        let test = try XCTUnwrap(try RemoteSignIn.method(for: RemoteConfiguration(url: url, options: ["client_id": "KEY", "endpoint": "http://127.0.0.1:9/"])))
        XCTAssertEqual(test.authorizeURL, "http://127.0.0.1:9/oauth2/authorize")
        XCTAssertEqual(test.tokenURL, "http://127.0.0.1:9/oauth2/token")

        XCTAssertThrowsError(try RemoteSignIn.method(for: RemoteConfiguration(url: url))) { error in
            XCTAssertTrue("\(error)".contains("client_id"), "\(error)")
        }
        XCTAssertNil(try RemoteSignIn.method(for: RemoteConfiguration(url: try RemoteURL("file:///srv"))))
    }

    /// A code redeemed with its verifier gives a refresh token the fixture then takes; a wrong
    /// verifier, or a code used twice, is `.codeRefused`.
    func testACodeIsRedeemedOnlyWithItsVerifierAndOnlyOnce() async throws {
        let s = try DropboxServer.started()
        addTeardownBlock { s.remove() }
        let method = try XCTUnwrap(try RemoteSignIn.method(for: RemoteConfiguration(url: try RemoteURL("dropbox:///"),
                                                                                    options: ["client_id": s.clientID, "endpoint": s.endpoint])))
        func code(_ pkce: PKCE) throws -> String {
            let page = try TimedProcess.run("/usr/bin/curl", ["-sS", "-f", method.authorizationURL(pkce: pkce, state: nil, redirectURI: nil)], timeout: 20)
            let start = try XCTUnwrap(page.stdout.range(of: "<code id=\"code\">"), "\(page)")
            let end = try XCTUnwrap(page.stdout.range(of: "</code>", range: start.upperBound..<page.stdout.endIndex))
            return String(page.stdout[start.upperBound..<end.lowerBound])
        }
        let transport = CurlTransport()
        let pkce = PKCE()
        let wrong = try code(pkce)
        do {
            _ = try await method.redeem(code: wrong, pkce: PKCE(), redirectURI: nil, transport: transport)
            XCTFail("a wrong verifier was taken")
        } catch {
            XCTAssertEqual(error.kind, .codeRefused, "\(error)")
        }
        let good = try code(pkce)
        let refresh = try await method.redeem(code: good, pkce: pkce, redirectURI: nil, transport: transport)
        XCTAssertTrue(refresh.hasPrefix("fixture-issued-"))
        do {
            _ = try await method.redeem(code: good, pkce: pkce, redirectURI: nil, transport: transport)
            XCTFail("a code was taken twice")
        } catch {
            XCTAssertEqual(error.kind, .codeRefused, "\(error)")
        }
        // The issued token works for a provider.
        let p = try ProviderFactory.make(RemoteConfiguration(url: try RemoteURL("dropbox:///"), options: ["client_id": s.clientID, "endpoint": s.endpoint],
                                                             secret: refresh), transport: TransportOptions())
        _ = try await p.enumerateItems(in: .rootContainer, page: nil)
    }
}
