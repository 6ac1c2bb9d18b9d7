import FavFSCore
import Foundation

/// Where an item is on the FTP server, in the two forms the provider needs: a libcurl URL (for
/// transfers: listings, RETR, STOR) and an absolute server path (for commands sent as QUOTE:
/// MLST, RNFR, DELE, MKD...).
///
/// The remote's path is absolute on the server (the gvfs convention): `ftp://host/pub` is `/pub`,
/// not `pub` below the login folder. URLs therefore start with `%2F`, which libcurl turns into
/// `CWD /`. QUOTE commands run before libcurl changes folder, in whatever folder a reused
/// connection was left in, so they always get absolute paths too.
struct FTPPaths: Sendable {
    /// `ftp://host:port` (always `ftp`: FTPS is explicit TLS, asked for with CURLOPT_USE_SSL).
    let origin: String
    /// The remote's folder on the server, absolute, without a trailing slash ("" for the root).
    let basePath: String

    init(origin: String, basePath: String) {
        self.origin = origin
        let trimmed = basePath.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        self.basePath = trimmed.isEmpty ? "" : "/" + trimmed
    }

    /// The absolute server path of an item (`/` for the root of a remote at the server's root).
    func serverPath(_ id: ItemIdentifier) -> String {
        let path = basePath + (id.isRoot ? "" : id.rawValue)
        return path.isEmpty ? "/" : path
    }

    /// The URL of a file (RETR, STOR) or of a folder (ends with "/": listings).
    func url(for id: ItemIdentifier, isFolder: Bool) -> String {
        let components = serverPath(id).split(separator: "/", omittingEmptySubsequences: true).map { Self.encode(String($0)) }
        var url = origin + "/%2F" + components.joined(separator: "/")
        if isFolder && !components.isEmpty { url += "/" }
        return url
    }

    /// A URL to hang commands on (QUOTE with CURLOPT_NOBODY): the server's root folder, so
    /// libcurl's only own command is `CWD /`.
    var commandURL: String { origin + "/%2F" }

    /// Percent-encodes one path component: everything but unreserved characters, so that `;`
    /// (libcurl's `;type=` suffix), `?`, `#` and `%` stay part of the name.
    static func encode(_ component: String) -> String {
        PercentEncoding.strict(component)
    }

    /// The root folder's URL (ends with "/"): for commands sent as a listing (`MLSD <path>`,
    /// `RETR <path>`) when a path cannot be in a URL.
    var commandFolderURL: String { origin + "/%2F/" }

    /// Whether libcurl takes the path in a URL: it refuses control characters (a tab) there,
    /// though FTP commands carry them fine.
    static func fitsInURL(_ serverPath: String) -> Bool {
        !serverPath.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }
    }

    /// Why a path cannot be sent in an FTP command (a command is one CRLF-terminated line).
    static func unsendable(_ path: String) -> String? {
        if path.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) {
            return "FTP cannot name items whose names contain a line break"
        }
        return nil
    }
}
