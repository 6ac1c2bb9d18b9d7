import Foundation
import FavFSCore
import Curl

extension ProviderFactory {
    /// `sftp://[user@]host[:port]/path`. Options:
    /// - `key`: the private key file (default: the first of ~/.ssh/id_ed25519, id_ecdsa, id_rsa);
    /// - `key_passphrase`: its passphrase (default: the secret);
    /// - `known_hosts`: the file the host key must be in (default ~/.ssh/known_hosts);
    /// - `timezone`: the server's time zone, for symlink times in listings (default UTC).
    /// The secret (`--password-stdin`) is the password, tried after the key.
    static func makeSFTP(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        try configuration.requireKnownOptions(RemoteURL.Kind.sftp.optionNames)
        let url = configuration.url
        if url.path == "/~" || url.path.hasPrefix("/~/") {
            // libcurl expands "/~/" in URLs but not in quote commands (rename, rm, ...).
            throw ProviderError(.invalidName, remote: url.description,
                                detail: "sftp:// paths are absolute on the server: write the home folder out (sftp://host/home/user/...) instead of ~")
        }
        let home = SFTPHome.directory
        func expand(_ path: String) -> String {
            path == "~" ? home : path.hasPrefix("~/") ? home + String(path.dropFirst(1)) : path
        }
        var key: String?
        if let option = configuration.options["key"] {
            key = expand(option)
            guard FileManager.default.isReadableFile(atPath: key!) else {
                throw ProviderError(.invalidName, remote: url.description, detail: "the private key \(option) (option key) cannot be read")
            }
        } else {
            key = ["id_ed25519", "id_ecdsa", "id_rsa"].map { "\(home)/.ssh/\($0)" }.first { FileManager.default.isReadableFile(atPath: $0) }
        }
        let password = configuration.password
        guard key != nil || password != nil else {
            throw ProviderError(.denied, remote: url.description,
                                detail: "no way to log in: no private key (~/.ssh/id_ed25519, id_ecdsa or id_rsa, or option key) and no password")
        }
        let knownHostsOption = configuration.options["known_hosts"] ?? "~/.ssh/known_hosts"
        var timeZone = TimeZone(identifier: "UTC")!
        if let name = configuration.options["timezone"] {
            guard let zone = TimeZone(identifier: name) else {
                throw ProviderError(.invalidName, remote: url.description, detail: "unknown time zone '\(name)' (option timezone; e.g. UTC, Europe/Berlin)")
            }
            timeZone = zone
        }
        let user = url.user ?? SFTPHome.userName
        let sftp = SFTPProvider.Configuration(
            host: url.host, port: url.port, user: user, rootPath: url.path, remoteDescription: url.description,
            privateKey: key, keyPassphrase: configuration.options["key_passphrase"], password: password,
            knownHosts: expand(knownHostsOption), knownHostsDisplay: knownHostsOption, timeZone: timeZone)
        return SFTPProvider(configuration: sftp, transport: CurlTransport(options: transport))
    }
}

/// The local user's home folder and name (for ~/.ssh and the default login name, as ssh does).
enum SFTPHome {
    static var directory: String {
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty { return home }
        if let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }

    static var userName: String {
        if let pw = getpwuid(getuid()), let name = pw.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"] ?? "root"
    }
}
