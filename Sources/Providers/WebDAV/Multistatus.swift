import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One `<D:response>` of a 207 multistatus, with only the properties whose propstat was 2xx.
struct DAVResource: Sendable, Equatable {
    var href: String
    var isCollection = false
    var contentLength: Int64?
    var lastModified: String?
    var etag: String?
    var quotaAvailableBytes: Int64?
    var quotaUsedBytes: Int64?
    /// A response-level `<D:status>` (a response without propstat, e.g. 404 for a member).
    var status: Int?
}

/// Why a multistatus body could not be read.
struct MultistatusError: Error, Sendable, CustomStringConvertible {
    var description: String
}

/// Parses RFC 4918 multistatus bodies, namespace-aware: DAV: elements are recognised under any
/// prefix or as the default namespace; elements of other namespaces are ignored.
enum Multistatus {
    static func parse(_ data: Data) throws(MultistatusError) -> [DAVResource] {
        guard UTF8Check.isValid(data) else { throw MultistatusError(description: "the body is not valid UTF-8") }
        var resources: [DAVResource] = []
        // A stream, not XMLParser(data:): that pushes the whole body to libxml2 as one chunk,
        // and a 40 MB listing (100,000 entries) trips its huge-input limit.
        try parse(InputStream(data: data)) { resources.append($0) }
        return resources
    }

    /// Parses a body (checked to be valid UTF-8 first: see `UTF8Check`) as it is read from `stream`, handing each response to `each` as soon as it
    /// ends: a 100,000-entry listing never exists whole in memory, neither as text nor as resources.
    static func parse(_ stream: InputStream, each: (DAVResource) -> Void) throws(MultistatusError) {
        try withoutActuallyEscaping(each) { (each) throws(MultistatusError) in try parse(stream, delegate: MultistatusDelegate(each: each)) }
    }

    private static func parse(_ stream: InputStream, delegate: MultistatusDelegate) throws(MultistatusError) {
        let parser = XMLParser(stream: stream)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        let ok = parser.parse()
        if let failure = delegate.failure { throw MultistatusError(description: failure) }
        guard ok else {
            throw MultistatusError(description: "malformed XML at \(XMLParseFailure.describe(parser))")
        }
        // Foundation's XMLParser on Linux may not report a truncated or mismatched document as an
        // error, so the structure is checked here too.
        if let open = delegate.openElements.last {
            throw MultistatusError(description: "malformed XML: the body ends inside <\(open)>")
        }
        guard delegate.sawMultistatus else {
            throw MultistatusError(description: "no DAV: multistatus element in the body")
        }
    }

    /// `HTTP/1.1 200 OK` → 200.
    static func statusCode(_ line: String) -> Int? {
        let parts = line.trimmingWhitespace().split(separator: " ")
        guard parts.count >= 2 else { return nil }
        return Int(parts[1])
    }
}

private final class MultistatusDelegate: NSObject, XMLParserDelegate {
    static let dav = "DAV:"

    /// Called with each complete response (only during `parse`).
    private let each: (DAVResource) -> Void
    var failure: String?
    var sawMultistatus = false

    /// Local names of the open DAV: elements ("" for foreign ones), root first.
    private var path: [String] = []
    /// Qualified names of all open elements, to catch mismatched end tags.
    private(set) var openElements: [String] = []
    private var text = ""
    private var current: DAVResource?
    private var hrefSeen = false
    /// The properties of the propstat being read; applied at its end if its status is 2xx.
    private var pending: [String: String] = [:]
    private var pendingCollection = false
    private var propstatStatus: Int?

    init(each: @escaping (DAVResource) -> Void) { self.each = each }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        let name = namespaceURI == Self.dav ? elementName : ""
        openElements.append(qName ?? elementName)
        text = ""
        switch name {
        case "multistatus" where path.isEmpty:
            sawMultistatus = true
        case "response" where path.last == "multistatus":
            current = DAVResource(href: "")
            hrefSeen = false
        case "propstat" where path.last == "response":
            pending = [:]
            pendingCollection = false
            propstatStatus = nil
        case "collection" where path.last == "resourcetype":
            pendingCollection = true
        default:
            break
        }
        path.append(name)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) { text += String(decoding: CDATABlock, as: UTF8.self) }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        let closing = qName ?? elementName
        guard openElements.popLast() == closing else {
            fail(parser, "malformed XML: </\(closing)> at line \(parser.lineNumber) does not close the open element")
            return
        }
        let name = path.popLast() ?? ""
        let parent = path.last
        switch (name, parent) {
        case ("href", "response"):
            current?.href = text.trimmingWhitespace()
            hrefSeen = true
        case ("status", "response"):
            current?.status = Multistatus.statusCode(text)
        case ("status", "propstat"):
            propstatStatus = Multistatus.statusCode(text)
        case (let prop, "prop") where path.count >= 2 && path[path.count - 2] == "propstat":
            pending[prop] = text.trimmingWhitespace()
        case ("propstat", "response"):
            applyPropstat()
        case ("response", "multistatus"):
            guard let resource = current else { break }
            current = nil
            guard hrefSeen, !resource.href.isEmpty else {
                fail(parser, "a response without an href")
                return
            }
            each(resource)
        default:
            break
        }
        text = ""
    }

    private func applyPropstat() {
        // A propstat without a status is out of spec; treat it as success rather than lose the props.
        guard (200..<300).contains(propstatStatus ?? 200), current != nil else { return }
        if pendingCollection { current!.isCollection = true }
        if let v = pending["getcontentlength"] { current!.contentLength = Int64(v) }
        if let v = pending["getlastmodified"], !v.isEmpty { current!.lastModified = v }
        if let v = pending["getetag"], !v.isEmpty { current!.etag = v }
        if let v = pending["quota-available-bytes"] { current!.quotaAvailableBytes = Int64(v) }
        if let v = pending["quota-used-bytes"] { current!.quotaUsedBytes = Int64(v) }
    }

    private func fail(_ parser: XMLParser, _ what: String) {
        if failure == nil { failure = what }
        parser.abortParsing()
    }
}
