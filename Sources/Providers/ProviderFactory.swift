import Foundation
import FavFSCore
import Curl

/// Makes the provider for a remote URL.
public enum ProviderFactory {
    /// - Parameters:
    ///   - password: from `--password-stdin` (wins over a password in the URL).
    public static func make(_ url: RemoteURL, password: String?, transport: TransportOptions = TransportOptions()) throws -> any Provider {
        switch url.kind {
        case .local:
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue else {
                throw ProviderError(.notFound, remote: url.description, detail: "no such folder")
            }
            return LocalProvider(root: url.path)
        case .webdav:
            let httpScheme = url.scheme == "davs" ? "https" : "http"
            var encodedPath = url.path.split(separator: "/", omittingEmptySubsequences: true)
                .map { WebDAVPaths.encode(String($0)) }.joined(separator: "/")
            encodedPath = "/" + encodedPath + (encodedPath.isEmpty ? "" : "/")
            let base = "\(httpScheme)://\(url.host)\(url.port.map { ":\($0)" } ?? "")\(encodedPath)"
            let credentials = url.user.map { CurlCredentials(user: $0, password: password ?? url.password ?? "") }
            return WebDAVProvider(configuration: .init(baseURL: base, remoteDescription: url.description, credentials: credentials),
                                  transport: CurlTransport(options: transport))
        }
    }
}
