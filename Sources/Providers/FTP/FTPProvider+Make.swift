import Foundation
import FavFSCore
import Curl

extension ProviderFactory {
    /// ftp:// and ftps:// remotes.
    static func makeFTP(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        throw ProviderError(.notSupported, remote: configuration.url.description, detail: "ftp:// and ftps:// is not built yet")
    }
}
