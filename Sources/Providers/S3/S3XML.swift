import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One object of a ListObjectsV2 page.
struct S3Object: Sendable, Equatable {
    var key: String
    var size: Int64
    /// Seconds since 1970 (S3 gives milliseconds; see `S3Time`).
    var lastModified: Double?
    /// Verbatim, quotes included (`"9b2cf535f27731c974343645a3985328"`).
    var etag: String?
}

/// One ListObjectsV2 page: `Contents` and `CommonPrefixes`, keys already decoded when the
/// listing was asked with `encoding-type=url`.
struct S3ListPage: Sendable, Equatable {
    var objects: [S3Object] = []
    var commonPrefixes: [String] = []
    var isTruncated = false
    var nextContinuationToken: String?
    var keyCount: Int?
}

/// The XML bodies S3 answers with. XMLParser is event-driven and a page holds at most 1,000
/// keys (`max-keys` is capped at 1,000 by S3), so a page's body stays small.
enum S3XML {
    struct ParseError: Error, CustomStringConvertible {
        let description: String
    }

    /// A ListBucketResult (ListObjectsV2).
    static func parseList(_ data: Data) throws -> S3ListPage {
        guard UTF8Check.isValid(data) else { throw ParseError(description: "the body is not valid UTF-8") }
        let delegate = ListDelegate()
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        parser.shouldProcessNamespaces = true
        guard parser.parse() else {
            throw ParseError(description: "malformed XML at \(XMLParseFailure.describe(parser))")
        }
        guard delegate.sawRoot else {
            throw ParseError(description: "no ListBucketResult element")
        }
        var page = delegate.page
        // EncodingType comes after Contents (moto) or before (S3): decode at the end.
        if delegate.encodingType?.lowercased() == "url" {
            for i in page.objects.indices {
                guard let key = S3Addressing.decodeListed(page.objects[i].key) else {
                    throw ParseError(description: "a key is not valid URL encoding: \(page.objects[i].key)")
                }
                page.objects[i].key = key
            }
            page.commonPrefixes = try page.commonPrefixes.map { p in
                guard let decoded = S3Addressing.decodeListed(p) else {
                    throw ParseError(description: "a common prefix is not valid URL encoding: \(p)")
                }
                return decoded
            }
        }
        return page
    }

    /// The text of every leaf element below the root, by local name (the first occurrence), and
    /// the root's name: enough for `<Error>`, `InitiateMultipartUploadResult`,
    /// `CompleteMultipartUploadResult` and `CopyObjectResult`.
    static func parseFlat(_ data: Data) -> (root: String, fields: [String: String])? {
        guard UTF8Check.isValid(data) else { return nil }
        let delegate = FlatDelegate()
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        parser.shouldProcessNamespaces = true
        guard parser.parse(), let root = delegate.root else { return nil }
        return (root, delegate.fields)
    }

    /// `Code` and `Message` of an `<Error>` body; nil when the body is not one.
    static func parseError(_ data: Data) -> (code: String, message: String?)? {
        guard !data.isEmpty, let flat = parseFlat(data), flat.root == "Error", let code = flat.fields["Code"] else { return nil }
        return (code, flat.fields["Message"])
    }

    // MARK: delegates

    private final class ListDelegate: NSObject, XMLParserDelegate {
        var page = S3ListPage()
        var encodingType: String?
        var sawRoot = false
        private var path: [String] = []
        private var text = ""
        private var object: S3Object?

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if path.isEmpty && name == "ListBucketResult" { sawRoot = true }
            path.append(name)
            text = ""
            if path.count == 2 && name == "Contents" { object = S3Object(key: "", size: 0) }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            defer { path.removeLast(); text = "" }
            switch (path.count, path.count >= 2 ? path[1] : "", name) {
            case (2, _, "Contents"):
                if let object { page.objects.append(object) }
                object = nil
            case (3, "Contents", "Key"): object?.key = text
            case (3, "Contents", "Size"): object?.size = Int64(text.trimmingCharacters(in: .whitespaces)) ?? 0
            case (3, "Contents", "ETag"): object?.etag = text
            case (3, "Contents", "LastModified"): object?.lastModified = S3Time.parseISO8601(text)
            case (3, "CommonPrefixes", "Prefix"): page.commonPrefixes.append(text)
            case (2, _, "IsTruncated"): page.isTruncated = text.trimmingCharacters(in: .whitespaces).lowercased() == "true"
            case (2, _, "NextContinuationToken"): page.nextContinuationToken = text
            case (2, _, "KeyCount"): page.keyCount = Int(text.trimmingCharacters(in: .whitespaces))
            case (2, _, "EncodingType"): encodingType = text
            default: break
            }
        }
    }

    private final class FlatDelegate: NSObject, XMLParserDelegate {
        var root: String?
        var fields: [String: String] = [:]
        private var depth = 0
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if depth == 0 { root = name }
            depth += 1
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            depth -= 1
            if depth >= 1 && fields[name] == nil { fields[name] = text }
            text = ""
        }
    }
}

/// S3's timestamps, to whole seconds: listings say `2024-05-01T10:20:30.123Z`, HEAD says
/// `Wed, 01 May 2024 10:20:30 GMT`. Both are floored to the second so that an item's mtime is
/// the same whether it came from a listing or a HEAD.
enum S3Time {
    /// `YYYY-MM-DDTHH:MM:SS[.fff]Z` → seconds since 1970, floored; nil when malformed.
    static func parseISO8601(_ s: String) -> Double? {
        let t = Array(s.trimmingCharacters(in: .whitespaces).utf8)
        guard t.count >= 20 else { return nil }
        func num(_ from: Int, _ count: Int) -> Int? {
            var v = 0
            for i in from..<(from + count) {
                guard t[i] >= 0x30 && t[i] <= 0x39 else { return nil }
                v = v * 10 + Int(t[i] - 0x30)
            }
            return v
        }
        guard t[4] == UInt8(ascii: "-"), t[7] == UInt8(ascii: "-"), t[10] == UInt8(ascii: "T"),
              t[13] == UInt8(ascii: ":"), t[16] == UInt8(ascii: ":"), t.last == UInt8(ascii: "Z"),
              let year = num(0, 4), let month = num(5, 2), let day = num(8, 2),
              let hour = num(11, 2), let minute = num(14, 2), let second = num(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60 else { return nil }
        return CivilDate.seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// An HTTP date (`Last-Modified`) → seconds since 1970.
    static func parseHTTP(_ s: String) -> Double? { HTTPDate.parse(s) }

}
