import FavFSCore
import Foundation

/// OneDrive's sign-in at the Microsoft identity platform (`/common`: personal and work or
/// school accounts): the consent page, the device authorization endpoint and the token
/// endpoint beside each other (`OneDriveEndpoints`, so the `endpoint` option moves all three),
/// the scope `offline_access Files.ReadWrite` (offline_access: else no refresh token), and
/// the redirect `http://localhost:PORT/` (Microsoft takes any port on a desktop app's
/// `http://localhost` redirect, not on `127.0.0.1`). The consent page shows no code to paste,
/// so without a desktop the sign-in is by device code.
enum OneDriveSignIn {
    static func method(_ configuration: RemoteConfiguration) throws -> OAuthSignIn {
        let clientID = try ProviderFactory.oneDriveClientID(configuration)
        let endpoints = try ProviderFactory.oneDriveEndpoints(configuration)
        let scope = [URLQueryItem(name: "scope", value: OneDriveEndpoints.scope)]
        return OAuthSignIn(service: "Microsoft", authorizeURL: endpoints.authorize, tokenURL: endpoints.token, clientID: clientID,
                           authorizeParameters: scope, tokenParameters: scope, loopbackHost: "localhost",
                           deviceAuthorizationURL: endpoints.deviceCode)
    }
}
