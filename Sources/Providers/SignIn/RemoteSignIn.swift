import FavFSCore

/// The remotes whose secret is got by signing in (OAuth 2 in a browser) rather than typed:
/// `favfs remote add` without `--password-stdin` signs in for these.
public enum RemoteSignIn {
    /// How to sign in for `configuration`, or nil when its kind of remote takes a typed secret.
    /// Throws when an option the sign-in needs is missing or wrong (Dropbox, OneDrive: `client_id`).
    public static func method(for configuration: RemoteConfiguration) throws -> OAuthSignIn? {
        switch configuration.url.kind {
        case .dropbox: return try DropboxSignIn.method(configuration)
        case .onedrive: return try OneDriveSignIn.method(configuration)
        default: return nil
        }
    }
}
