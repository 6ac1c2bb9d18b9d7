import FavFSCore

/// Where a bucket is and how items become keys and keys become URLs.
///
/// Keys are UTF-8 strings; in URLs every byte except the unreserved `A-Z a-z 0-9 - _ . ~` is
/// percent-encoded (`/` kept in paths), which is exactly SigV4's canonical `UriEncode`. libcurl
/// 7.88 signs the path and query as they stand in the URL (it does not canonicalize them), so
/// the URLs built here must already be canonical: encoded that way and with the query sorted.
struct S3Addressing: Sendable, Equatable {
    /// `http` or `https`.
    var scheme: String
    /// The endpoint's host (without the bucket) and port.
    var host: String
    var port: Int?
    var bucket: String
    /// Path-style (`http://host/bucket/key`) rather than virtual-hosted (`http://bucket.host/key`).
    var pathStyle: Bool
    /// The key prefix the remote's root stands for: "" or "photos/2024/" (always ending in "/").
    var rootPrefix: String

    init(scheme: String, host: String, port: Int?, bucket: String, pathStyle: Bool, rootPath: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.bucket = bucket
        self.pathStyle = pathStyle
        let trimmed = rootPath.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        self.rootPrefix = trimmed.isEmpty ? "" : trimmed + "/"
    }

    // MARK: items ↔ keys

    /// The object key of a file.
    func fileKey(_ id: ItemIdentifier) -> String {
        rootPrefix + id.components.joined(separator: "/")
    }

    /// The key prefix of a folder's children, ending in "/" (the root: `rootPrefix`, maybe "").
    /// It is also the key of the folder's marker object.
    func folderPrefix(_ id: ItemIdentifier) -> String {
        id.isRoot ? rootPrefix : fileKey(id) + "/"
    }

    /// The child name of `key` in the folder whose prefix is `prefix`, without a trailing "/"
    /// (CommonPrefixes end in one); nil when `key` is not below `prefix`.
    static func childName(of key: String, in prefix: String) -> String? {
        guard key.hasPrefix(prefix) else { return nil }
        var name = String(key.dropFirst(prefix.count))
        if name.hasSuffix("/") { name.removeLast() }
        return name
    }

    // MARK: URLs

    private var authority: String {
        let h = pathStyle ? host : "\(bucket).\(host)"
        return port.map { "\(h):\($0)" } ?? h
    }

    /// The URL of an object, with an optional query (sorted and encoded here).
    func objectURL(_ key: String, query: [(String, String)] = []) -> String {
        let path = (pathStyle ? "/" + Self.encode(bucket) : "") + "/" + Self.encode(key, keepSlash: true)
        return "\(scheme)://\(authority)\(path)" + Self.queryString(query)
    }

    /// The bucket's URL (for listings), with a query.
    func bucketURL(query: [(String, String)]) -> String {
        let path = pathStyle ? "/" + Self.encode(bucket) : "/"
        return "\(scheme)://\(authority)\(path)" + Self.queryString(query)
    }

    /// The value of `x-amz-copy-source` for `key` in this bucket: `/bucket/key`, URL-encoded.
    func copySource(_ key: String) -> String {
        "/" + Self.encode(bucket) + "/" + Self.encode(key, keepSlash: true)
    }

    // MARK: encoding

    /// SigV4 `UriEncode`: every byte but `A-Z a-z 0-9 - _ . ~` as `%XX` (uppercase hex);
    /// `/` kept when `keepSlash` (object paths).
    static func encode(_ s: String, keepSlash: Bool = false) -> String {
        PercentEncoding.strict(s, keepSlash: keepSlash)
    }

    /// `?k=v&...` in SigV4 canonical form: names and values encoded, sorted by encoded name then
    /// value, `=` also for empty values (`?uploads=`); "" for no query.
    static func queryString(_ query: [(String, String)]) -> String {
        guard !query.isEmpty else { return "" }
        let pairs = query.map { (encode($0.0), encode($0.1)) }.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        return "?" + pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// Decodes a key from a listing made with `encoding-type=url` (S3 writes a space as `+`,
    /// a `+` as `%2B`); nil for a bad escape or bytes that are not UTF-8.
    static func decodeListed(_ s: String) -> String? {
        PercentEncoding.decode(Array(s.utf8)[...], plusIsSpace: true)
    }
}
