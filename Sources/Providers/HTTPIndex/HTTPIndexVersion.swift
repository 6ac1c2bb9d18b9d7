import Curl
import Foundation

/// Where file sizes, mtimes and versions come from.
public enum HTTPIndexMetadata: String, Sendable, CaseIterable {
    /// A HEAD per file (concurrent): exact size, Last-Modified to the second, ETag. Versions are
    /// the ETag when the server sends a strong one, else size + Last-Modified.
    case head
    /// Trust the index page where it is exact (nginx with `autoindex_exact_size on`) and send no
    /// HEADs for those files; HEAD only the rest. The page gives mtimes to the minute, so every
    /// mtime is floored to the minute and versions are size + that minute (whatever the source,
    /// so a listing and `item(for:)` agree).
    case index
}

/// An item's version on an HTTP index remote, and how a read checks that a response still
/// belongs to it.
///
/// A version is either a strong ETag, verbatim (`"5dc-660c490eb6511"`), or a synthetic
/// `size=N;modified=T` (T: Last-Modified in seconds since 1970). Synthetic versions never start
/// with a quote, so they cannot be taken for ETags. A weak ETag is not used: `If-Match` compares
/// strongly, and Apache's tag for a file changed in the last second is weak, then turns strong.
enum HTTPIndexVersion {
    enum Pin: Equatable {
        case etag(String)
        case sizeAndModified(size: Int64, modified: Int64)
        case none
    }

    /// The version for a file with these attributes.
    static func make(size: Int64, modified: Double?, etag: String?, metadata: HTTPIndexMetadata) -> String? {
        if metadata == .head, let etag, etag.hasPrefix("\"") { return etag }
        guard let modified = reported(modified, metadata: metadata) else { return nil }
        return "size=\(size);modified=\(Int64(modified.rounded(.down)))"
    }

    /// What a read must check, from an item's version.
    static func pin(_ version: String?) -> Pin {
        guard let version else { return .none }
        if version.hasPrefix("\"") { return .etag(version) }
        var size: Int64?, modified: Int64?
        for field in version.split(separator: ";") {
            let kv = field.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { continue }
            if kv[0] == "size" { size = Int64(kv[1]) }
            if kv[0] == "modified" { modified = Int64(kv[1]) }
        }
        if let size, let modified { return .sizeAndModified(size: size, modified: modified) }
        return .none
    }

    /// `modified` as a listing reports it: floored to the minute with `.index`, as the page shows it.
    static func reported(_ modified: Double?, metadata: HTTPIndexMetadata) -> Double? {
        guard let modified else { return nil }
        return metadata == .index ? (modified / 60).rounded(.down) * 60 : modified
    }

    /// Why `response` (206 or 200 to a GET pinned by `pin`) is not of that version; nil when it is
    /// or cannot tell. Servers that ignore If-Match / If-Unmodified-Since (python's http.server)
    /// are caught here: the headers arrive with the bytes, which the caller then discards.
    static func mismatch(_ pin: Pin, response: CurlResponse, metadata: HTTPIndexMetadata) -> String? {
        switch pin {
        case .none:
            return nil
        case .etag(let tag):
            if let got = response.headers["etag"], got.hasPrefix("\""), got != tag {
                return "ETag is now \(got), was \(tag)"
            }
            return nil
        case let .sizeAndModified(size, modified):
            if let total = totalSize(response), total != size {
                return "size is now \(total), was \(size)"
            }
            if let lm = response.headers["last-modified"].flatMap(HTTPDate.parse),
               let got = reported(lm, metadata: metadata), Int64(got) != modified {
                return "Last-Modified is now \(response.headers["last-modified"]!), was \(Int64(modified)) s since 1970"
            }
            return nil
        }
    }

    /// The complete content's size: `Content-Range: bytes a-b/TOTAL` (206, 416), else Content-Length of a 200.
    static func totalSize(_ response: CurlResponse) -> Int64? {
        if let range = response.headers["content-range"], let slash = range.lastIndex(of: "/") {
            return Int64(range[range.index(after: slash)...].trimmingCharacters(in: .whitespaces))
        }
        if response.status == 200, let length = response.headers["content-length"] {
            return Int64(length.trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// An HTTP date for `If-Unmodified-Since`.
    static func httpDate(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
    }
}
