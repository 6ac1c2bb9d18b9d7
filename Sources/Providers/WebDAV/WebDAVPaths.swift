import FavFSCore

/// Identifiers ↔ request URLs ↔ multistatus hrefs.
///
/// Request URLs percent-encode every byte outside RFC 3986's unreserved set, so names with
/// `# % ? + ' & ; : = @ ,`, spaces, tabs or non-ASCII reach the server as the exact bytes.
/// Hrefs come back encoded however the server likes: they are split on '/' *before* decoding, so
/// an encoded slash inside a name stays inside that name (and is then refused as a name).
struct WebDAVPaths: Sendable {
    /// Ends with '/'.
    let baseURL: String
    /// The base URL's path, split and decoded (`/files/` → ["files"]).
    let baseSegments: [String]

    init(baseURL: String) {
        self.baseURL = baseURL.hasSuffix("/") ? baseURL : baseURL + "/"
        baseSegments = Self.segments(ofHref: self.baseURL) ?? []
    }

    /// The URL of an item; folders (and the root) end with '/', which Apache otherwise answers with a 301.
    func url(for identifier: ItemIdentifier, isFolder: Bool) -> String {
        let components = identifier.components
        if components.isEmpty { return baseURL }
        return baseURL + components.map(Self.encode).joined(separator: "/") + (isFolder ? "/" : "")
    }

    /// Where an href sits relative to a folder that was listed.
    enum Relation: Equatable {
        case itself
        case child(name: String)
        case unrelated
    }

    func relation(ofHref href: String, to folder: ItemIdentifier) -> Relation {
        relation(ofHref: href, toFolder: segments(of: folder))
    }

    /// The decoded segments of a folder's href (the base URL's, then the folder's): a listing
    /// computes them once for all its entries.
    func segments(of folder: ItemIdentifier) -> [String] { baseSegments + folder.components }

    /// `relation(ofHref:to:)` with the folder's `segments(of:)` already at hand.
    func relation(ofHref href: String, toFolder folderSegments: [String]) -> Relation {
        guard let segments = Self.segments(ofHref: href) else { return .unrelated }
        guard segments.count >= folderSegments.count, zip(segments, folderSegments).allSatisfy(Self.sameName) else {
            return .unrelated
        }
        switch segments.count - folderSegments.count {
        case 0: return .itself
        case 1: return .child(name: segments.last!)
        default: return .unrelated
        }
    }

    /// Byte-wise equality: Swift's String == treats canonically equivalent Unicode as equal,
    /// but two names that differ in normalization are two different files on the server.
    private static func sameName(_ pair: (String, String)) -> Bool {
        pair.0.utf8.elementsEqual(pair.1.utf8)
    }

    // MARK: encoding


    /// Percent-encodes one path component with the strict set (only unreserved stay literal).
    static func encode(_ component: String) -> String {
        PercentEncoding.strict(component)
    }

    /// Decodes %XX escapes; nil for a bad escape or bytes that are not UTF-8.
    static func decode(_ s: Substring) -> String? {
        s.contains("%") ? decode(Array(s.utf8)[...]) : String(s)
    }

    /// `decode` of bytes (a segment of an href).
    static func decode(_ s: ArraySlice<UInt8>) -> String? { PercentEncoding.decode(s) }

    /// An href (absolute URL or absolute path) → its decoded path segments; nil if undecodable.
    /// Works on the UTF-8 bytes: a listing of 5,000 entries calls it 5,000 times, and searching
    /// Characters (grapheme by grapheme, `range(of:)` through Foundation) cost more than the
    /// XML parsing.
    static func segments(ofHref href: String) -> [String]? {
        let b = Array(href.utf8)
        var start = 0, end = b.count
        while start < end, isSpace(b[start]) { start += 1 }
        while end > start, isSpace(b[end - 1]) { end -= 1 }
        // An absolute URL: the path starts at the first '/' after "scheme://authority".
        if let scheme = firstSchemeSeparator(b, start, end) {
            start = b[(scheme + 3)..<end].firstIndex(of: UInt8(ascii: "/")) ?? end
        }
        if let cut = b[start..<end].firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) { end = cut }
        var result: [String] = []
        var i = start
        while i < end {
            if b[i] == UInt8(ascii: "/") { i += 1; continue }
            var j = i
            while j < end, b[j] != UInt8(ascii: "/") { j += 1 }
            guard let decoded = decode(b[i..<j]) else { return nil }
            result.append(decoded)
            i = j
        }
        return result
    }

    private static func isSpace(_ c: UInt8) -> Bool {
        c == UInt8(ascii: " ") || c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r") || c == UInt8(ascii: "\t")
    }

    /// Where "://" first occurs in `b[start..<end]`.
    private static func firstSchemeSeparator(_ b: [UInt8], _ start: Int, _ end: Int) -> Int? {
        var i = start
        while i + 2 < end {
            if b[i] == UInt8(ascii: ":"), b[i + 1] == UInt8(ascii: "/"), b[i + 2] == UInt8(ascii: "/") { return i }
            i += 1
        }
        return nil
    }
}

extension String {
    /// Without spaces, tabs and line breaks at either end (compared as bytes: cheap, and the
    /// bytes trimmed are ASCII, so what is left is whole characters).
    func trimmingWhitespace() -> String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = utf8.firstIndex(where: { !isSpace($0) }), let last = utf8.lastIndex(where: { !isSpace($0) }) else { return "" }
        if first == utf8.startIndex, utf8.index(after: last) == utf8.endIndex { return self }
        return String(decoding: utf8[first...last], as: UTF8.self)
    }
}
