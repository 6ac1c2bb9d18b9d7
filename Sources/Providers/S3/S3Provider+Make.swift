import Foundation
import FavFSCore
import Curl

extension ProviderFactory {
    /// s3:// remotes.
    static func makeS3(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        throw ProviderError(.notSupported, remote: configuration.url.description, detail: "s3:// is not built yet")
    }
}
