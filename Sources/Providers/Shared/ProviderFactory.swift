import Foundation
import FavFSCore
import Curl

/// Makes the provider for a remote. Each provider folder has its own `make…` entry.
public enum ProviderFactory {
    /// The provider for `configuration`, with every transfer limited by `transport`.
    public static func make(_ configuration: RemoteConfiguration, transport: TransportOptions = TransportOptions()) throws -> any Provider {
        switch configuration.url.kind {
        case .local: return try makeLocal(configuration)
        case .webdav: return try makeWebDAV(configuration, transport: transport)
        case .s3: return try makeS3(configuration, transport: transport)
        case .sftp: return try makeSFTP(configuration, transport: transport)
        case .ftp: return try makeFTP(configuration, transport: transport)
        case .httpIndex: return try makeHTTPIndex(configuration, transport: transport)
        case .favart: return try makeFavart(configuration, transport: transport)
        case .smb: return try makeSMB(configuration, transport: transport)
        case .dropbox: return try makeDropbox(configuration, transport: transport)
        case .onedrive: return try makeOneDrive(configuration, transport: transport)
        }
    }

    /// A remote from its URL alone (options from the query); `password` from `--password-stdin`.
    public static func make(_ url: RemoteURL, password: String?, transport: TransportOptions = TransportOptions()) throws -> any Provider {
        try make(RemoteConfiguration(url: url, secret: password), transport: transport)
    }
}
