import Curl
import FavFSCore
import Foundation

extension ProviderFactory {
    /// `dropbox:///path` (the path: a folder of the Dropbox as the remote's root). Options:
    /// - `client_id` (required): the app key the refresh token was issued to;
    /// - `endpoint`: one base URL for the API, content, notify and OAuth endpoints (default: Dropbox's);
    /// - `slice_size`: the slices of a new file uploaded while it is written (a multiple of 4 MiB, default 8M).
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
        if let value = configuration.options["slice_size"] {
            guard let size = SizeOption.parse(value), size > 0, size % (4 << 20) == 0, size <= 148 << 20 else {
                throw ProviderError(.invalidName, remote: url.description,
                                    detail: "option slice_size '\(value)' must be a multiple of 4 MiB up to 148M (Dropbox takes 150 MiB per request and advises 4 MiB multiples)")
            }
            config.streamingSliceSize = size
        }
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
