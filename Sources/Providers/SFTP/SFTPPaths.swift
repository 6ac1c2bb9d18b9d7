import FavFSCore

/// Identifiers ↔ server paths ↔ request URLs ↔ quote-command arguments.
///
/// SFTP paths are absolute on the server: the remote's root (`/srv/files`) plus the item's
/// components. libcurl percent-decodes the URL path before it becomes the SFTP path, so every byte
/// outside RFC 3986's unreserved set is encoded (a name with `%`, `#`, `?`, spaces or non-ASCII
/// reaches the server as its exact bytes). Quote commands (`rename`, `rm`, ...) are not URLs:
/// their arguments are double-quoted with `\` before `"` and `\` (libcurl's Curl_get_pathname).
struct SFTPPaths: Sendable {
    /// `sftp://host:port` (no path, no user: the user goes with the credentials).
    let origin: String
    /// The server path of the remote's root, without a trailing '/' ("" for the server's "/").
    let rootPath: String

    init(host: String, port: Int?, rootPath: String) {
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        origin = "sftp://\(hostPart)\(port.map { ":\($0)" } ?? "")"
        var root = rootPath.hasPrefix("/") ? rootPath : "/" + rootPath
        while root.hasSuffix("/") { root.removeLast() }
        self.rootPath = root
    }

    /// The item's absolute path on the server (the root itself is "/" when the remote is the server's root).
    func serverPath(_ id: ItemIdentifier) -> String {
        let path = rootPath + id.components.map { "/" + $0 }.joined()
        return path.isEmpty ? "/" : path
    }

    /// The URL that stats or downloads an item (never ends with '/': that would list it).
    func url(_ id: ItemIdentifier) -> String {
        let path = serverPath(id)
        return origin + (path == "/" ? "/" : Self.encodePath(path))
    }

    /// The URL that lists a folder (ends with '/').
    func listingURL(_ id: ItemIdentifier) -> String {
        let path = serverPath(id)
        return origin + (path == "/" ? "/" : Self.encodePath(path) + "/")
    }

    /// An argument of a quote command: the server path in double quotes, `"` and `\` escaped.
    func quoted(_ id: ItemIdentifier) -> String { Self.quote(serverPath(id)) }

    static func quote(_ argument: String) -> String {
        var out = "\""
        for ch in argument.unicodeScalars {
            if ch == "\"" || ch == "\\" { out += "\\" }
            out.unicodeScalars.append(ch)
        }
        return out + "\""
    }

    // MARK: encoding

    /// Percent-encodes each component of an absolute path; the '/' separators stay.
    static func encodePath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { encode(String($0)) }.joined(separator: "/")
    }

    /// Percent-encodes one path component with the strict set (only unreserved bytes stay literal).
    static func encode(_ component: String) -> String {
        // '.' is encoded too: libcurl removes "." and ".." segments from URLs, and a
        // name such as "trailing dots..." must reach the server unchanged.
        PercentEncoding.strict(component, encodeDots: true)
    }
}
