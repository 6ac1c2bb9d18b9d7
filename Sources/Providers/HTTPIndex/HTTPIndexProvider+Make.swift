import Foundation
import FavFSCore
import Curl

extension ProviderFactory {
    /// `http://[user@]host[:port]/path/` and `https://…`: a read-only directory index.
    /// Options: `metadata=head|index` (see `HTTPIndexMetadata`; default head),
    /// `head_concurrency=N` (HEADs in flight while listing; default 8).
    static func makeHTTPIndex(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        try configuration.requireKnownOptions(RemoteURL.Kind.httpIndex.optionNames)
        let url = configuration.url
        let metadataOption = configuration.options["metadata"] ?? HTTPIndexMetadata.head.rawValue
        guard let metadata = HTTPIndexMetadata(rawValue: metadataOption.lowercased()) else {
            throw ProviderError(.invalidName, remote: url.description,
                                detail: "option metadata=\(metadataOption): use head or index")
        }
        var concurrency = 8
        if let value = configuration.options["head_concurrency"] {
            guard let n = Int(value), (1...64).contains(n) else {
                throw ProviderError(.invalidName, remote: url.description,
                                    detail: "option head_concurrency=\(value): use a number from 1 to 64")
            }
            concurrency = n
        }
        var encodedPath = url.path.split(separator: "/", omittingEmptySubsequences: true)
            .map { WebDAVPaths.encode(String($0)) }.joined(separator: "/")
        encodedPath = "/" + encodedPath + (encodedPath.isEmpty ? "" : "/")
        let base = "\(url.scheme)://\(url.host)\(url.port.map { ":\($0)" } ?? "")\(encodedPath)"
        let credentials = url.user.map { CurlCredentials(user: $0, password: configuration.password ?? "") }
        var options = transport
        // Enough connections for the concurrent HEADs of a listing.
        options.maxConnectionsPerHost = max(options.maxConnectionsPerHost, concurrency)
        return HTTPIndexProvider(configuration: .init(baseURL: base, remoteDescription: url.description, credentials: credentials,
                                                      metadata: metadata, headConcurrency: concurrency),
                                 transport: CurlTransport(options: options))
    }
}
