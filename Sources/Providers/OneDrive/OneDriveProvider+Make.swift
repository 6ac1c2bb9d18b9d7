import Curl
import FavFSCore
import Foundation

extension ProviderFactory {
    /// `onedrive:///path` (the path: a folder of the signed-in user's drive as the remote's
    /// root). Options:
    /// - `client_id` (required): the Application (client) ID the refresh token was issued to;
    /// - `endpoint`: one base URL for Graph (`/v1.0`) and the token endpoint (default: Microsoft's);
    /// - `page_size`: entries per listing page (`$top`, default 500).
    /// The secret (`--password-stdin`) is the OAuth 2 refresh token.
    static func makeOneDrive(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        try configuration.requireKnownOptions(RemoteURL.Kind.onedrive.optionNames)
        let url = configuration.url
        if url.user != nil || url.password != nil {
            throw ProviderError(.invalidName, remote: url.description,
                                detail: "onedrive:// remotes take no user or password in the URL: the refresh token is the secret (--password-stdin)")
        }
        let clientID = try oneDriveClientID(configuration)
        guard let refreshToken = configuration.secret, !refreshToken.isEmpty else {
            throw ProviderError(.denied, remote: url.description,
                                detail: "no refresh token: sign in with favfs remote add, or give one with --password-stdin (docs/remotes.md, \"OneDrive: signing in\")")
        }
        let endpoints = try oneDriveEndpoints(configuration)
        var config = OneDriveProvider.Configuration(endpoints: endpoints, clientID: clientID, refreshToken: refreshToken,
                                                    rootFolder: url.path, remoteDescription: url.description)
        if let text = configuration.options["page_size"] {
            guard let size = Int(text), (1...1000).contains(size) else {
                throw ProviderError(.invalidName, remote: url.description, detail: "option page_size '\(text)' is not a number from 1 to 1000")
            }
            config.pageSize = size
        }
        return OneDriveProvider(configuration: config, transport: CurlTransport(options: transport), transportOptions: transport)
    }

    /// The `client_id` option (the application's client ID), required.
    static func oneDriveClientID(_ configuration: RemoteConfiguration) throws -> String {
        guard let clientID = configuration.options["client_id"], !clientID.isEmpty else {
            throw ProviderError(.invalidName, remote: configuration.url.description,
                                detail: "onedrive:// remotes need the application's client ID as option client_id (--option client_id=ID)")
        }
        return clientID
    }

    /// Microsoft's endpoints, or all of them at the `endpoint` option's base URL.
    static func oneDriveEndpoints(_ configuration: RemoteConfiguration) throws -> OneDriveEndpoints {
        guard let endpoint = configuration.options["endpoint"] else { return .microsoft }
        guard let parsed = URLComponents(string: endpoint), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host?.isEmpty == false else {
            throw ProviderError(.invalidName, remote: configuration.url.description, detail: "option endpoint '\(endpoint)' is not an http(s):// URL")
        }
        return OneDriveEndpoints(base: endpoint)
    }
}
