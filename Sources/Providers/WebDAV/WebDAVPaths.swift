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
        guard let segments = Self.segments(ofHref: href) else { return .unrelated }
        let folderSegments = baseSegments + folder.components
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
        guard s.contains("%") else { return String(s) }
        var bytes: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "%") {
                guard it.count >= 2, let hi = hexValue(it.removeFirst()), let lo = hexValue(it.removeFirst()) else { return nil }
                bytes.append(hi << 4 | lo)
            } else {
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// An href (absolute URL or absolute path) → its decoded path segments; nil if undecodable.
    static func segments(ofHref href: String) -> [String]? {
        var path = Substring(href.trimmingWhitespace())
        if let scheme = path.range(of: "://") {
            let afterAuthority = path[scheme.upperBound...]
            path = afterAuthority.firstIndex(of: "/").map { afterAuthority[$0...] } ?? "/"
        }
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        var result: [String] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            guard let decoded = decode(segment) else { return nil }
            result.append(decoded)
        }
        return result
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
