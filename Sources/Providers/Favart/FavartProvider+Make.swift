import Foundation
import FavFSCore
import Curl

extension ProviderFactory {
    /// `favart://host[:port][/folder]` (HTTP) and `favarts://…` (HTTPS). The path, if any, is a
    /// folder of the media tree to use as the remote's root. The API has no authentication, so
    /// a user or password in the URL is refused rather than ignored.
    static func makeFavart(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        try configuration.requireKnownOptions(RemoteURL.Kind.favart.optionNames)
        let url = configuration.url
        if url.user != nil || configuration.password != nil {
            throw ProviderError(.invalidName, remote: url.description,
                                detail: "the Favart API has no authentication: remove the user and password from the remote")
        }
        let httpScheme = url.scheme == "favarts" ? "https" : "http"
        // An IPv6 literal comes without its brackets.
        let host = url.host.contains(":") && !url.host.hasPrefix("[") ? "[\(url.host)]" : url.host
        let base = "\(httpScheme)://\(host)\(url.port.map { ":\($0)" } ?? "")"
        return FavartProvider(configuration: .init(baseURL: base, rootFolder: url.path, remoteDescription: url.description),
                              transport: CurlTransport(options: transport))
    }
}
