import Foundation
import FavFSCore
import Curl

extension ProviderFactory {
    /// sftp:// remotes.
    static func makeSFTP(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        throw ProviderError(.notSupported, remote: configuration.url.description, detail: "sftp:// is not built yet")
    }
}
