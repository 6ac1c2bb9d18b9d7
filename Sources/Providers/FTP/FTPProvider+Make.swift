import Foundation
import FavFSCore
import Curl

extension ProviderFactory {
    /// `ftp://[user@]host[:port]/path` and `ftps://…` (explicit FTP over TLS: AUTH TLS on the
    /// normal port, as gvfs does). The path is absolute on the server. No user: anonymous.
    ///
    /// Options: `ca_certificate=/path/ca.pem` (verify the server with this CA), `tls_verify=false`
    /// (do not verify the certificate: an explicit opt-out), `tls=required` (on ftp://: require
    /// AUTH TLS, like ftps://).
    static func makeFTP(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        try configuration.requireKnownOptions(RemoteURL.Kind.ftp.optionNames)
        let url = configuration.url
        var useTLS = url.scheme == "ftps"
        if let tls = configuration.options["tls"] {
            switch tls.lowercased() {
            case "required", "true", "yes", "1", "on": useTLS = true
            case "none", "false", "no", "0", "off":
                if url.scheme == "ftps" {
                    throw ProviderError(.invalidName, remote: url.description, detail: "ftps:// always uses TLS; use ftp:// for plain FTP")
                }
            default:
                throw ProviderError(.invalidName, remote: url.description, detail: "option tls='\(tls)': use tls=required")
            }
        }
        var options = transport
        if !configuration.flag("tls_verify", default: true) { options.verifyTLS = false }
        let caCertificate = configuration.options["ca_certificate"]
        if let ca = caCertificate, !FileManager.default.isReadableFile(atPath: ca) {
            throw ProviderError(.notFound, remote: url.description, detail: "option ca_certificate: cannot read '\(ca)'")
        }
        if (caCertificate != nil || configuration.options["tls_verify"] != nil) && !useTLS {
            throw ProviderError(.invalidName, remote: url.description,
                                detail: "ca_certificate and tls_verify are for FTPS: use ftps:// or tls=required")
        }
        let host = url.host.contains(":") ? "[\(url.host)]" : url.host
        let origin = "ftp://\(host)\(url.port.map { ":\($0)" } ?? "")"
        let credentials = url.user.map { CurlCredentials(user: $0, password: configuration.password ?? "") }
        return FTPProvider(configuration: .init(origin: origin, basePath: url.path, remoteDescription: url.description,
                                                credentials: credentials, useTLS: useTLS, caCertificate: caCertificate),
                           transport: CurlTransport(options: options))
    }
}
