import Foundation
import FavFSCore
import Curl

extension ProviderFactory {
    /// http:// and https:// remotes.
    static func makeHTTPIndex(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        throw ProviderError(.notSupported, remote: configuration.url.description, detail: "http:// and https:// is not built yet")
    }
}
