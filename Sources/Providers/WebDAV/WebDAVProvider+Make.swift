import Foundation
import FavFSCore
import Curl

extension ProviderFactory {
    /// `dav://[user@]host[:port]/path` (HTTP) and `davs://…` (HTTPS).
    static func makeWebDAV(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        try configuration.requireKnownOptions(RemoteURL.Kind.webdav.optionNames)
        let url = configuration.url
        let httpScheme = url.scheme == "davs" ? "https" : "http"
        var encodedPath = url.path.split(separator: "/", omittingEmptySubsequences: true)
            .map { WebDAVPaths.encode(String($0)) }.joined(separator: "/")
        encodedPath = "/" + encodedPath + (encodedPath.isEmpty ? "" : "/")
        let base = "\(httpScheme)://\(url.host)\(url.port.map { ":\($0)" } ?? "")\(encodedPath)"
        var listing = transport
        listing.niceness = 5
        let credentials = url.user.map { CurlCredentials(user: $0, password: configuration.password ?? "") }
        return WebDAVProvider(configuration: .init(baseURL: base, remoteDescription: url.description, credentials: credentials),
                              transport: CurlTransport(options: transport), listingTransport: CurlTransport(options: listing))
    }
}
