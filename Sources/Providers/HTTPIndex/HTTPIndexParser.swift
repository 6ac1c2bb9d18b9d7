import FavFSCore

/// One child of a folder, as a directory index page shows it.
struct IndexEntry: Equatable, Sendable {
    /// The real name, from the href (percent- and entity-decoded), never the displayed text:
    /// Apache and nginx truncate long names there ("averyverylongna..>").
    var name: String
    /// The href ended with "/".
    var isFolder: Bool
    /// The size in bytes, when the page gives it exactly (nginx with `autoindex_exact_size on`).
    var exactSize: Int64?
    /// The modification time, floored to the minute (nginx prints `dd-Mon-yyyy HH:MM` in GMT).
    var modifiedMinute: Double?
}

/// What a directory index page holds for the folder it lists.
struct IndexPage: Sendable {
    var entries: [IndexEntry]
    /// Links to children whose names cannot be served (see `ItemIdentifier.validate`).
    var skipped: [(name: String, problem: ItemNameProblem)]
    /// Child hrefs whose percent-encoding is broken or not UTF-8, dropped.
    var undecodable: [String]
}

/// Reads the links of an HTML directory index — Apache mod_autoindex (plain, FancyIndexing,
/// HTMLTable, with or without icon links), nginx autoindex, `python3 -m http.server` — and keeps
/// those that name a direct child of the listed folder.
///
/// A link names a child when its href, after HTML entities are decoded, is `name` or `name/`
/// (optionally `./name`), or an absolute path or same-origin URL of the folder plus one segment.
/// Everything else is navigation: column sorting (`?C=N;O=D`), "Parent Directory" (`/` or
/// `../`), fragments, other hosts, deeper paths. Names are taken from the href only.
enum HTTPIndexParser {
    /// `folderURL`: the listed folder's absolute URL (`http://host:port/files/sub/`), percent-encoded.
    static func parse(_ html: [UInt8], folderURL: String) -> IndexPage {
        let folder = FolderLocation(folderURL)
        var page = IndexPage(entries: [], skipped: [], undecodable: [])
        var seen = Set<String>()
        for link in links(in: html) {
            guard let (encoded, isFolder) = folder.childSegment(ofHref: link.href) else { continue }
            guard let name = WebDAVPaths.decode(encoded) else {
                page.undecodable.append(link.href)
                continue
            }
            // Icon links repeat the name link (IndexOptions IconsAreLinks): the first one wins,
            // the columns come from the line of the later, textual one.
            if !seen.insert(name).inserted {
                if let i = page.entries.lastIndex(where: { $0.name == name }), page.entries[i].exactSize == nil {
                    let columns = NginxColumns.parse(link.tail)
                    page.entries[i].exactSize = isFolder ? nil : columns?.size
                    page.entries[i].modifiedMinute = columns?.modified ?? page.entries[i].modifiedMinute
                }
                continue
            }
            if let problem = ItemIdentifier.validate(name: name) {
                page.skipped.append((name, problem))
                continue
            }
            let columns = NginxColumns.parse(link.tail)
            page.entries.append(IndexEntry(name: name, isFolder: isFolder,
                                           exactSize: isFolder ? nil : columns?.size, modifiedMinute: columns?.modified))
        }
        return page
    }

    /// One `<a href=…>` of the page, its href entity-decoded, and the text between its `</a>`
    /// and the next tag or line end (where nginx puts the date and size columns).
    struct Link: Equatable {
        var href: String
        var tail: Substring
    }

    /// Every anchor with an href, in page order. A byte scanner rather than an HTML parser: index
    /// pages are generated, flat, and can hold tens of thousands of links.
    static func links(in html: [UInt8]) -> [Link] {
        var result: [Link] = []
        let n = html.count
        var i = 0
        while i + 2 < n {
            guard html[i] == UInt8(ascii: "<"), html[i + 1] | 0x20 == UInt8(ascii: "a"), isSpace(html[i + 2]) else {
                i += 1
                continue
            }
            var j = i + 2
            var href: String?
            // Attributes up to '>': name[=value], the value quoted with " or ' or bare.
            while j < n, html[j] != UInt8(ascii: ">") {
                if isSpace(html[j]) || html[j] == UInt8(ascii: "/") { j += 1; continue }
                let nameStart = j
                while j < n, !isSpace(html[j]), html[j] != UInt8(ascii: "="), html[j] != UInt8(ascii: ">") { j += 1 }
                let attribute = html[nameStart..<j]
                while j < n, isSpace(html[j]) { j += 1 }
                guard j < n, html[j] == UInt8(ascii: "=") else { continue }
                j += 1
                while j < n, isSpace(html[j]) { j += 1 }
                guard j < n else { break }
                var valueStart = j, valueEnd = j
                if html[j] == UInt8(ascii: "\"") || html[j] == UInt8(ascii: "'") {
                    let quote = html[j]
                    valueStart = j + 1
                    valueEnd = valueStart
                    while valueEnd < n, html[valueEnd] != quote { valueEnd += 1 }
                    j = min(n, valueEnd + 1)
                } else {
                    while valueEnd < n, !isSpace(html[valueEnd]), html[valueEnd] != UInt8(ascii: ">") { valueEnd += 1 }
                    j = valueEnd
                }
                if href == nil, attribute.count == 4, attribute.elementsEqual("href".utf8, by: { $0 | 0x20 == $1 }) {
                    href = HTMLEntities.decode(Substring(decoding: html[valueStart..<valueEnd], as: UTF8.self))
                }
            }
            i = j
            guard let href else { continue }
            result.append(Link(href: href, tail: tail(after: j, in: html)))
        }
        return result
    }

    /// The text after this anchor's `</a>` up to the next '<' or newline.
    private static func tail(after start: Int, in html: [UInt8]) -> Substring {
        let n = html.count
        var k = start
        // Find "</a" (the anchor's own end); give up at a newline or another anchor.
        while k + 2 < n {
            if html[k] == UInt8(ascii: "\n") { return "" }
            if html[k] == UInt8(ascii: "<") {
                if html[k + 1] == UInt8(ascii: "/"), html[k + 2] | 0x20 == UInt8(ascii: "a") { break }
                if html[k + 1] | 0x20 == UInt8(ascii: "a"), isSpace(html[k + 2]) { return "" }
            }
            k += 1
        }
        while k < n, html[k] != UInt8(ascii: ">") { k += 1 }
        k += 1
        guard k < n else { return "" }
        var e = k
        while e < n, html[e] != UInt8(ascii: "<"), html[e] != UInt8(ascii: "\n") { e += 1 }
        return Substring(decoding: html[k..<e], as: UTF8.self)
    }

    private static func isSpace(_ b: UInt8) -> Bool {
        b == UInt8(ascii: " ") || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\r") || b == 0x0C
    }
}

/// The listed folder's URL, split for comparing hrefs against it.
struct FolderLocation {
    /// `http://host:port`, lowercased.
    let origin: String
    /// The folder's path segments, decoded.
    let segments: [String]

    init(_ folderURL: String) {
        let lower = folderURL.lowercased()
        if let scheme = lower.range(of: "://") {
            let rest = folderURL[scheme.upperBound...]
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            origin = (folderURL[..<scheme.upperBound] + rest[..<slash]).lowercased()
        } else {
            origin = ""
        }
        segments = WebDAVPaths.segments(ofHref: folderURL) ?? []
    }

    /// The still percent-encoded child segment an href names, and whether it names a folder;
    /// nil when the href is not a direct child of this folder.
    func childSegment(ofHref raw: String) -> (Substring, isFolder: Bool)? {
        let href = Substring(raw.trimmingWhitespace())
        // A query or fragment is navigation (sorting, anchors): names with '?' or '#' are
        // always percent-encoded in the index pages of all three servers.
        guard !href.isEmpty, !href.contains("?"), !href.contains("#") else { return nil }
        let schemeEnd = Self.schemeEnd(href)
        if schemeEnd != nil || href.hasPrefix("//") {
            // An absolute URL or a network-path reference ("//host/path"): only one on this
            // server can name a child.
            let scheme = schemeEnd.map { href[..<$0] } ?? Substring(origin.prefix { $0 != "/" })
            let rest = schemeEnd.map { href[$0...] } ?? href
            guard rest.hasPrefix("//") else { return nil }  // mailto:, javascript:, data:
            let authority = rest.dropFirst(2)
            let slash = authority.firstIndex(of: "/") ?? authority.endIndex
            guard (scheme + "//" + authority[..<slash]).lowercased() == origin else { return nil }
            return absolute(path: authority[slash...])
        }
        if href.hasPrefix("/") { return absolute(path: href) }
        // Relative: "name", "name/", "./name" (Apache writes "./co:lon" so the colon does not read as a scheme).
        var relative = href
        while relative.hasPrefix("./") { relative = relative.dropFirst(2) }
        let isFolder = relative.hasSuffix("/")
        let segment = isFolder ? relative.dropLast() : relative
        guard !segment.isEmpty, !segment.contains("/"), segment != ".", segment != ".." else { return nil }
        return (segment, isFolder)
    }

    /// An absolute path on this server: the folder's path plus exactly one segment.
    private func absolute(path: Substring) -> (Substring, isFolder: Bool)? {
        guard path.hasPrefix("/"), !path.hasPrefix("//") else { return nil }
        let isFolder = path.hasSuffix("/")
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == segments.count + 1 else { return nil }
        for (part, expected) in zip(parts, segments) {
            guard let decoded = WebDAVPaths.decode(part), decoded.utf8.elementsEqual(expected.utf8) else { return nil }
        }
        let last = parts.last!
        guard last != ".", last != ".." else { return nil }
        return (last, isFolder)
    }

    /// The index just past "scheme:" when `href` starts with an RFC 3986 scheme.
    static func schemeEnd(_ href: Substring) -> Substring.Index? {
        guard let first = href.first, first.isASCII, first.isLetter else { return nil }
        for i in href.indices {
            let c = href[i]
            if c == ":" { return href.index(after: i) }
            guard c.isASCII, c.isLetter || c.isNumber || c == "+" || c == "-" || c == "." else { return nil }
        }
        return nil
    }
}
