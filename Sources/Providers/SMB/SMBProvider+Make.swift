import Curl
import FavFSCore
import Foundation

extension ProviderFactory {
    /// `smb://[user@]host[:port]/share[/path]`. Options:
    /// - `domain`: the user's domain or workgroup (default: the server's).
    /// The secret (`--password-stdin`) is the password; without a user, the local user's name.
    static func makeSMB(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        try configuration.requireKnownOptions(RemoteURL.Kind.smb.optionNames)
        let url = configuration.url
        let paths = SMBPaths(host: url.host, path: url.path)
        guard !paths.share.isEmpty else {
            throw ProviderError(.invalidName, remote: url.description, detail: "smb:// remotes name a share: smb://host/SHARE or smb://host/SHARE/folder")
        }
        guard let password = configuration.password else {
            throw ProviderError(.denied, remote: url.description,
                                detail: "no password: give it with --password-stdin (or store it with favfs remote add)")
        }
        if let domain = configuration.options["domain"], domain.isEmpty || domain.contains("/") {
            throw ProviderError(.invalidName, remote: url.description, detail: "option domain '\(domain)' is not a domain or workgroup name")
        }
        let timeout = max(transport.connectTimeout, Double(transport.lowSpeedTime))
        let settings = SMBSettings(domain: configuration.options["domain"], user: url.user ?? SFTPHome.userName, password: password,
                                   port: url.port, timeoutMilliseconds: Int32(min(timeout, 3600) * 1000))
        return SMBProvider(paths: paths, settings: settings, remoteDescription: url.description)
    }
}
