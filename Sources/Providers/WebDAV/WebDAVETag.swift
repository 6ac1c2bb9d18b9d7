/// Entity tags (RFC 9110 §8.8.3): `"opaque"` is strong, `W/"opaque"` weak.
///
/// Apache gives a weak ETag to a file modified less than a second ago (its mtime might still
/// change within that second) and the strong form of the same tag afterwards. `If-Match` uses
/// strong comparison, so a weak tag never matches: the write side compares tags weakly itself.
enum WebDAVETag {
    static func isWeak(_ tag: String) -> Bool { tag.hasPrefix("W/") }

    /// The tag without its `W/` marker.
    static func opaque(_ tag: String) -> Substring {
        let t = Substring(tag)
        return isWeak(tag) ? t.dropFirst(2) : t
    }

    /// Weak comparison: equal opaque tags, whether either is weak or not.
    static func weaklyEqual(_ a: String, _ b: String) -> Bool {
        opaque(a) == opaque(b)
    }

    /// The version of a file on a server whose listings carry no `getetag` (nginx's dav-ext
    /// module): its size and modification time (whole seconds, what HTTP dates hold). Marked
    /// so it is never sent in `If-Match` or `If-Range`: such servers ignore those headers, and
    /// one that honoured them would refuse a tag it never gave.
    static func synthetic(size: Int64, modified: Double?) -> String {
        "favfs-meta:size=\(size);mtime=\(modified.map { String(Int64($0.rounded(.down))) } ?? "none")"
    }

    /// `tag` as an entity-tag, quotes included. WsgiDAV lists `getetag` without the quotes
    /// its `ETag` header has: the same file then had two versions, and every file uploaded
    /// here (its version read from a HEAD) looked changed at the next listing.
    static func quoted(_ tag: String) -> String {
        tag.hasPrefix("\"") || tag.hasPrefix("W/\"") ? tag : "\"" + tag + "\""
    }

    /// Whether `tag` is a `synthetic` version, not the server's.
    static func isSynthetic(_ tag: String) -> Bool { tag.hasPrefix("favfs-meta:") }
}
