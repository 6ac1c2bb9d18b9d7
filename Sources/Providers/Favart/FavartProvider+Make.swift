import Foundation
import FavFSCore
import Curl

extension ProviderFactory {
    /// favart:// and favarts:// remotes.
    static func makeFavart(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        throw ProviderError(.notSupported, remote: configuration.url.description, detail: "favart:// and favarts:// is not built yet")
    }
}
