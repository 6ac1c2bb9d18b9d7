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
}
