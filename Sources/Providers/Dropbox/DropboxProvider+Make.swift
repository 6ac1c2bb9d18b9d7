import Curl
import FavFSCore
import Foundation

extension ProviderFactory {
    /// `dropbox:///path` (the path: a folder of the Dropbox as the remote's root). Options:
    /// - `client_id` (required): the app key the refresh token was issued to;
    /// - `endpoint`: one base URL for the API, content, notify and OAuth endpoints (default: Dropbox's).
    /// The secret is the OAuth 2 refresh token (`favfs remote add` signs in to get it, or
    /// `--password-stdin`).
    static func makeDropbox(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        try configuration.requireKnownOptions(RemoteURL.Kind.dropbox.optionNames)
        let url = configuration.url
        if url.user != nil || url.password != nil {
            throw ProviderError(.invalidName, remote: url.description,
                                detail: "dropbox:// remotes take no user or password in the URL: the refresh token is the secret (--password-stdin)")
        }
        let clientID = try dropboxClientID(configuration)
        let signIn = dropboxSignInCommand(configuration, clientID: clientID)
        guard let refreshToken = configuration.secret, !refreshToken.isEmpty else {
            throw ProviderError(.denied, remote: url.description,
                                detail: "no refresh token: sign in with '\(signIn)', or give one with --password-stdin (docs/remotes.md, \"Dropbox: signing in\")")
        }
        var config = DropboxProvider.Configuration(endpoints: try dropboxEndpoints(configuration), clientID: clientID, refreshToken: refreshToken,
                                                   rootFolder: url.path, remoteDescription: url.description)
        config.signInCommand = signIn
        return DropboxProvider(configuration: config, transport: CurlTransport(options: transport), transportOptions: transport)
    }

    /// The `client_id` option (the app key), required.
    static func dropboxClientID(_ configuration: RemoteConfiguration) throws -> String {
        guard let clientID = configuration.options["client_id"], !clientID.isEmpty else {
            throw ProviderError(.invalidName, remote: configuration.url.description,
                                detail: "dropbox:// remotes need the app key as option client_id (--option client_id=KEY)")
        }
        return clientID
    }

    /// Dropbox's endpoints, or all of them at the `endpoint` option's base URL.
    static func dropboxEndpoints(_ configuration: RemoteConfiguration) throws -> DropboxEndpoints {
        guard let endpoint = configuration.options["endpoint"] else { return .dropbox }
        guard let parsed = URLComponents(string: endpoint), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host?.isEmpty == false else {
            throw ProviderError(.invalidName, remote: configuration.url.description, detail: "option endpoint '\(endpoint)' is not an http(s):// URL")
        }
        return DropboxEndpoints(base: endpoint)
    }

    /// The command that signs in to this remote again (for messages about a missing or
    /// revoked refresh token).
    static func dropboxSignInCommand(_ configuration: RemoteConfiguration, clientID: String) -> String {
        var command = "favfs remote add \(configuration.name ?? "NAME") \(configuration.url.description) --option client_id=\(clientID)"
        if let endpoint = configuration.options["endpoint"] { command += " --option endpoint=\(endpoint)" }
        return command + " --force"
    }
}
