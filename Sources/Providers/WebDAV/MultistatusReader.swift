import CLibXML2
import Foundation

/// Reads a 207 multistatus body with libxml2's SAX2 push parser, element names compared as C
/// strings: Foundation's XMLParser (libxml2 underneath) made a Swift String of every name, a
/// dictionary of every element's attributes and a String of every run of text, which cost a
/// listing more than libxml2's parsing and favfs's own work together.
///
/// Nothing but elements and text reaches it: no document tree is built, entities other than
/// XML's five are never declared (so `&name;` of a DTD is an error, and an entity bomb cannot
/// expand), and nothing is fetched from the network.
final class MultistatusReader {
    /// The elements that matter, by their local name in the DAV: namespace.
    private enum Name {
        case multistatus, response, href, status, propstat, prop, resourcetype, collection
        case getcontentlength, getlastmodified, getetag, quotaAvailableBytes, quotaUsedBytes
        /// `WebDAVModifiedTime.property` in `WebDAVModifiedTime.namespace`.
        case keptModified
        /// Another DAV: element.
        case otherDAV
        /// An element of another namespace (ignored, with everything in it).
        case foreign
    }

    private static let names: [(StaticString, Name)] = [
        ("response", .response), ("href", .href), ("propstat", .propstat), ("prop", .prop), ("status", .status),
        ("resourcetype", .resourcetype), ("collection", .collection), ("getcontentlength", .getcontentlength),
        ("getlastmodified", .getlastmodified), ("getetag", .getetag), ("multistatus", .multistatus),
        ("quota-available-bytes", .quotaAvailableBytes), ("quota-used-bytes", .quotaUsedBytes),
    ]

    /// The properties of the propstat being read; applied at its end if its status is 2xx.
    private struct Pending {
        var collection = false
        var contentLength: String?
        var lastModified: String?
        var etag: String?
        var quotaAvailable: String?
        var quotaUsed: String?
        var keptModified: String?
    }

    private let each: (DAVResource) -> Void
    private var failure: String?
    private var sawMultistatus = false
    /// The open elements, root first.
    private var path: [Name] = []
    private var text: [UInt8] = []
    private var current: DAVResource?
    private var hrefSeen = false
    private var pending = Pending()
    private var propstatStatus: Int?
    /// Set while parsing, to stop the parser at the first error found here.
    private var context: xmlParserCtxtPtr?

    private init(each: @escaping (DAVResource) -> Void) { self.each = each }

    /// libxml2 is initialised once per process before any thread parses.
    private static let initialised: Void = { xmlInitParser() }()

    /// Parses what `read` hands over (chunks; nil or empty at the end), calling `each` with every
    /// complete response.
    static func parse(reading read: () -> Data?, each: @escaping (DAVResource) -> Void) throws(MultistatusError) {
        _ = initialised
        let reader = MultistatusReader(each: each)
        var sax = xmlSAXHandler()
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { ctx, localname, _, uri, _, _, _, _, _ in
            guard let ctx, let localname else { return }
            MultistatusReader.from(ctx).start(localname, uri)
        }
        sax.endElementNs = { ctx, localname, _, uri in
            guard let ctx, let localname else { return }
            MultistatusReader.from(ctx).end(localname, uri)
        }
        sax.characters = { ctx, ch, len in
            guard let ctx, let ch else { return }
            MultistatusReader.from(ctx).text.append(contentsOf: UnsafeBufferPointer(start: ch, count: Int(len)))
        }
        sax.cdataBlock = sax.characters
        // Errors are read from the context once parsing stops; nothing is printed.
        sax.serror = { _, _ in }
        try withExtendedLifetime(reader) { () throws(MultistatusError) in
            // The handler is copied into the context: `&sax` is only read during this call.
            guard let ctxt = xmlCreatePushParserCtxt(&sax, Unmanaged.passUnretained(reader).toOpaque(), nil, 0, nil) else {
                throw MultistatusError(description: "the XML parser could not be started")
            }
            defer { xmlFreeParserCtxt(ctxt) }
            _ = xmlCtxtUseOptions(ctxt, Int32(XML_PARSE_NONET.rawValue))
            reader.context = ctxt
            defer { reader.context = nil }
            var ok = true
            while ok, reader.failure == nil, let chunk = read(), !chunk.isEmpty {
                ok = chunk.withUnsafeBytes { bytes in
                    xmlParseChunk(ctxt, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), 0) == 0
                }
            }
            if ok && reader.failure == nil { ok = xmlParseChunk(ctxt, nil, 0, 1) == 0 }
            if let failure = reader.failure { throw MultistatusError(description: failure) }
            if !ok || ctxt.pointee.wellFormed == 0 {
                throw MultistatusError(description: "malformed XML at \(Self.place(of: ctxt))")
            }
            if let open = reader.path.last {
                throw MultistatusError(description: "malformed XML: the body ends inside an element (\(open))")
            }
            guard reader.sawMultistatus else {
                throw MultistatusError(description: "no DAV: multistatus element in the body")
            }
        }
    }

    private static func from(_ ctx: UnsafeMutableRawPointer) -> MultistatusReader {
        Unmanaged<MultistatusReader>.fromOpaque(ctx).takeUnretainedValue()
    }

    /// "line 3, column 17: an end tag does not match its start tag (libxml2 error 76)"
    private static func place(of ctxt: xmlParserCtxtPtr) -> String {
        guard let error = xmlCtxtGetLastError(ctxt), error.pointee.code != 0 else {
            return "line \(xmlSAX2GetLineNumber(ctxt)): the parser stopped without saying why"
        }
        return XMLParseFailure.describe(code: Int(error.pointee.code), line: Int(error.pointee.line), column: Int(error.pointee.int2))
    }

    private static func name(_ localname: UnsafePointer<xmlChar>, _ uri: UnsafePointer<xmlChar>?) -> Name {
        guard let uri else { return .foreign }
        return localname.withMemoryRebound(to: CChar.self, capacity: 1) { local in
            uri.withMemoryRebound(to: CChar.self, capacity: 1) { uri in
                guard strcmp(uri, "DAV:") == 0 else {
                    let ours = UnsafeRawPointer(WebDAVModifiedTime.namespace.utf8Start).assumingMemoryBound(to: CChar.self)
                    let name = UnsafeRawPointer(WebDAVModifiedTime.property.utf8Start).assumingMemoryBound(to: CChar.self)
                    return strcmp(uri, ours) == 0 && strcmp(local, name) == 0 ? .keptModified : .foreign
                }
                for (text, name) in names {
                    let known = UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
                    if strcmp(local, known) == 0 { return name }
                }
                return .otherDAV
            }
        }
    }

    private func start(_ localname: UnsafePointer<xmlChar>, _ uri: UnsafePointer<xmlChar>?) {
        let name = Self.name(localname, uri)
        text.removeAll(keepingCapacity: true)
        switch name {
        case .multistatus where path.isEmpty:
            sawMultistatus = true
        case .response where path.last == .multistatus:
            current = DAVResource(href: "")
            hrefSeen = false
        case .propstat where path.last == .response:
            pending = Pending()
            propstatStatus = nil
        case .collection where path.last == .resourcetype:
            pending.collection = true
        default:
            break
        }
        path.append(name)
    }

    private func end(_ localname: UnsafePointer<xmlChar>, _ uri: UnsafePointer<xmlChar>?) {
        defer { text.removeAll(keepingCapacity: true) }
        guard let name = path.popLast() else { return }
        let parent = path.last
        let inProp = parent == .prop && path.count >= 2 && path[path.count - 2] == .propstat
        switch name {
        case .href where parent == .response:
            current?.href = value()
            hrefSeen = true
        case .status where parent == .response:
            current?.status = Multistatus.statusCode(utf8: text)
        case .status where parent == .propstat:
            propstatStatus = Multistatus.statusCode(utf8: text)
        case .getcontentlength where inProp: pending.contentLength = value()
        case .getlastmodified where inProp: pending.lastModified = value()
        case .getetag where inProp: pending.etag = value()
        case .quotaAvailableBytes where inProp: pending.quotaAvailable = value()
        case .quotaUsedBytes where inProp: pending.quotaUsed = value()
        case .keptModified where inProp: pending.keptModified = value()
        case .propstat where parent == .response:
            applyPropstat()
        case .response where parent == .multistatus:
            guard let resource = current else { break }
            current = nil
            guard hrefSeen, !resource.href.isEmpty else {
                fail("a response without an href")
                return
            }
            each(resource)
        default:
            break
        }
    }

    /// The element's text without surrounding whitespace.
    private func value() -> String {
        String(decoding: text, as: UTF8.self).trimmingWhitespace()
    }

    private func applyPropstat() {
        // A propstat without a status is out of spec; treat it as success rather than lose the props.
        guard (200..<300).contains(propstatStatus ?? 200), current != nil else { return }
        if pending.collection { current!.isCollection = true }
        if let v = pending.contentLength { current!.contentLength = Int64(v) }
        if let v = pending.lastModified, !v.isEmpty { current!.lastModified = v }
        if let v = pending.etag, !v.isEmpty { current!.etag = WebDAVETag.quoted(v) }
        if let v = pending.quotaAvailable { current!.quotaAvailableBytes = Int64(v) }
        if let v = pending.quotaUsed { current!.quotaUsedBytes = Int64(v) }
        if let v = pending.keptModified, !v.isEmpty { current!.keptModified = v }
        if pending.keptModified != nil { current!.keptModifiedNamed = true }
    }

    private func fail(_ what: String) {
        if failure == nil { failure = what }
        if let context { xmlStopParser(context) }
    }
}
