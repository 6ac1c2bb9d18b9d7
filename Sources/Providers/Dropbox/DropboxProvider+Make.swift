import Curl
import FavFSCore
import Foundation

extension ProviderFactory {
    /// `dropbox:///path` (the path: a folder of the Dropbox as the remote's root). Options:
    /// - `client_id` (required): the app key the refresh token was issued to;
    /// - `endpoint`: one base URL for the API, content and OAuth endpoints (default: Dropbox's).
    /// The secret (`--password-stdin`) is the OAuth 2 refresh token.
    static func makeDropbox(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        try configuration.requireKnownOptions(RemoteURL.Kind.dropbox.optionNames)
        let url = configuration.url
        if url.user != nil || url.password != nil {
            throw ProviderError(.invalidName, remote: url.description,
                                detail: "dropbox:// remotes take no user or password in the URL: the refresh token is the secret (--password-stdin)")
        }
        guard let clientID = configuration.options["client_id"], !clientID.isEmpty else {
            throw ProviderError(.invalidName, remote: url.description,
                                detail: "dropbox:// remotes need the app key as option client_id (--option client_id=KEY)")
        }
        guard let refreshToken = configuration.secret, !refreshToken.isEmpty else {
            throw ProviderError(.denied, remote: url.description,
                                detail: "no refresh token: give it with --password-stdin (or store it with favfs remote add) (docs/remotes.md, \"Dropbox: getting a refresh token\")")
        }
        var endpoints = DropboxEndpoints.dropbox
        if let endpoint = configuration.options["endpoint"] {
            guard let parsed = URLComponents(string: endpoint), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host?.isEmpty == false else {
                throw ProviderError(.invalidName, remote: url.description, detail: "option endpoint '\(endpoint)' is not an http(s):// URL")
            }
            endpoints = DropboxEndpoints(base: endpoint)
        }
        let config = DropboxProvider.Configuration(endpoints: endpoints, clientID: clientID, refreshToken: refreshToken,
                                                   rootFolder: url.path, remoteDescription: url.description)
        return DropboxProvider(configuration: config, transport: CurlTransport(options: transport), transportOptions: transport)
    }
}
