import FavFSCore
import Foundation

/// Dropbox's sign-in: the consent page at www.dropbox.com, the token endpoint of the API, and
/// `token_access_type=offline` (else Dropbox issues a short-lived access token only, no refresh
/// token). With the `endpoint` option both are at that base URL (a test server).
enum DropboxSignIn {
    static let authorizeURL = "https://www.dropbox.com/oauth2/authorize"

    static func method(_ configuration: RemoteConfiguration) throws -> OAuthSignIn {
        let clientID = try ProviderFactory.dropboxClientID(configuration)
        let endpoints = try ProviderFactory.dropboxEndpoints(configuration)
        let authorize = configuration.options["endpoint"] == nil ? authorizeURL : endpoints.api + "/oauth2/authorize"
        return OAuthSignIn(service: "Dropbox", authorizeURL: authorize, tokenURL: endpoints.token, clientID: clientID,
                           authorizeParameters: [URLQueryItem(name: "token_access_type", value: "offline")])
    }
}
