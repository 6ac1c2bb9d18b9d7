import Foundation

/// The provider options each kind of remote knows, so a command line can refuse a mistyped key
/// (`--option regoin=…`) when a remote is added, not only when it is mounted.
extension RemoteURL.Kind {
    /// The option keys this kind's provider accepts: the one list each provider's `make…` entry
    /// passes to `RemoteConfiguration.requireKnownOptions`.
    public var optionNames: Set<String> {
        switch self {
        case .s3: return ProviderFactory.s3Options
        case .ftp: return ["ca_certificate", "tls_verify", "tls"]
        case .httpIndex: return ["metadata", "head_concurrency"]
        case .sftp: return ["key", "key_passphrase", "known_hosts", "timezone"]
        case .smb: return ["domain"]
        case .dropbox: return ["client_id", "endpoint", "slice_size"]
        case .onedrive: return ["client_id", "endpoint", "page_size"]
        case .local, .webdav, .favart: return []
        }
    }

    /// What to call a remote of this kind in a message: "an S3 remote", "a WebDAV remote".
    public var remoteNoun: String {
        switch self {
        case .s3: return "an S3 remote"
        case .ftp: return "an FTP remote"
        case .httpIndex: return "an HTTP remote"
        case .sftp: return "an SFTP remote"
        case .local: return "a local (file://) remote"
        case .webdav: return "a WebDAV remote"
        case .favart: return "a Favart remote"
        case .smb: return "an SMB remote"
        case .dropbox: return "a Dropbox remote"
        case .onedrive: return "a OneDrive remote"
        }
    }
}
