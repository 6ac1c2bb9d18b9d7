import Foundation
import FavFSCore
import Curl

extension ProviderFactory {
    /// The options an `s3://` remote knows.
    static let s3Options: Set<String> = ["endpoint", "region", "profile", "access_key_id", "path_style", "max_keys",
                                         "multipart_threshold", "part_size"]

    /// `s3://bucket/prefix`. Options: `endpoint` (e.g. http://127.0.0.1:9000; default AWS),
    /// `region` (us-east-1), `profile`, `access_key_id` (with the remote's secret), `path_style`,
    /// `max_keys` (listing page size, 1–1000), `multipart_threshold` and `part_size` (bytes, or
    /// with a K/M/G suffix, binary units).
    static func makeS3(_ configuration: RemoteConfiguration, transport: TransportOptions) throws -> any Provider {
        try configuration.requireKnownOptions(s3Options)
        let s3 = try S3Provider.configuration(from: configuration, environment: ProcessInfo.processInfo.environment,
                                              home: NSHomeDirectory())
        return S3Provider(configuration: s3, transport: CurlTransport(options: transport))
    }
}

extension S3Provider {
    /// The provider's configuration from a remote's URL, options and secret. Credentials are
    /// resolved here, once (see `S3Credentials.resolve` for the order).
    static func configuration(from remote: RemoteConfiguration, environment: [String: String], home: String) throws -> Configuration {
        let url = remote.url
        let description = url.description
        func invalid(_ detail: String) -> ProviderError { ProviderError(.invalidName, remote: description, detail: detail) }

        let region = remote.options["region"] ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        guard !region.isEmpty, region.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw invalid("region '\(region)' is not a region name (e.g. us-east-1)")
        }

        var scheme = "https", host = "s3.\(region).amazonaws.com", port: Int? = nil
        var custom = false
        if let endpoint = remote.options["endpoint"] {
            guard let comps = URLComponents(string: endpoint), let s = comps.scheme?.lowercased(), s == "http" || s == "https",
                  let h = comps.host, !h.isEmpty else {
                throw invalid("endpoint '\(endpoint)' is not an http:// or https:// URL")
            }
            scheme = s; host = h; port = comps.port; custom = true
        }
        // Path-style for custom endpoints (an IP or localhost cannot carry the bucket as a
        // subdomain, and S3-compatible servers rarely have wildcard DNS); virtual-hosted for AWS.
        let pathStyle = remote.options["path_style"] != nil ? remote.flag("path_style") : custom
        if !pathStyle && (Self.isIPAddress(host) || host == "localhost") {
            throw invalid("path_style=false needs a host name: \(host) cannot have the bucket as a subdomain")
        }

        let maxKeys = try integer(remote.options["max_keys"], default: 1000, name: "max_keys", remote: description)
        guard (1...1000).contains(maxKeys) else { throw invalid("max_keys must be 1 to 1000 (S3's limit), not \(maxKeys)") }
        let threshold = try size(remote.options["multipart_threshold"], default: 64 << 20, name: "multipart_threshold", remote: description)
        let partSize = try size(remote.options["part_size"], default: 16 << 20, name: "part_size", remote: description)
        guard partSize >= 5 << 20, partSize <= 5 << 30 else {
            throw invalid("part_size must be 5 MiB to 5 GiB (S3's limits), not \(partSize)")
        }
        guard threshold >= 1 else { throw invalid("multipart_threshold must be positive") }

        let addressing = S3Addressing(scheme: scheme, host: host, port: port, bucket: url.host, pathStyle: pathStyle, rootPath: url.path)
        let credentials = try S3Credentials.resolve(remote, environment: environment, home: home)
        return Configuration(remoteDescription: description, addressing: addressing, region: region, credentials: credentials,
                             maxKeys: maxKeys, multipartThreshold: threshold, partSize: partSize)
    }

    static func isIPAddress(_ host: String) -> Bool {
        let stripped = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, stripped, &v4) == 1 || inet_pton(AF_INET6, stripped, &v6) == 1
    }

    private static func integer(_ value: String?, default d: Int, name: String, remote: String) throws -> Int {
        guard let value else { return d }
        guard let n = Int(value) else {
            throw ProviderError(.invalidName, remote: remote, detail: "\(name) must be a number, not '\(value)'")
        }
        return n
    }

    private static func size(_ value: String?, default d: Int64, name: String, remote: String) throws -> Int64 {
        guard let value else { return d }
        guard let n = SizeOption.parse(value) else {
            throw ProviderError(.invalidName, remote: remote, detail: "\(name) must be a size in bytes (e.g. 16777216 or 16M), not '\(value)'")
        }
        return n
    }
}
