import Foundation

/// One `<D:response>` of a 207 multistatus, with only the properties whose propstat was 2xx.
struct DAVResource: Sendable, Equatable {
    var href: String
    var isCollection = false
    var contentLength: Int64?
    var lastModified: String?
    var etag: String?
    var quotaAvailableBytes: Int64?
    var quotaUsedBytes: Int64?
    /// favfs's own dead property: a modification time set through a mount, with the version
    /// it was set on (`WebDAVModifiedTime`).
    var keptModified: String?
    /// favfs's dead property was named in a propstat whose status is 2xx: in a PROPPATCH's
    /// answer, the server says it stored it.
    var keptModifiedNamed = false
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
        // In pieces: one chunk of a 40 MB listing (100,000 entries) would trip libxml2's
        // huge-input limit.
        var offset = 0
        try parse(reading: {
            guard offset < data.count else { return nil }
            let end = min(data.count, offset + (256 << 10))
            defer { offset = end }
            return data.subdata(in: offset..<end)
        }) { resources.append($0) }
        return resources
    }

    /// Parses a body handed over in chunks by `read` (nil at the end), calling `each` with every
    /// response as soon as it ends.
    static func parse(reading read: () -> Data?, each: (DAVResource) -> Void) throws(MultistatusError) {
        try withoutActuallyEscaping(each) { (each) throws(MultistatusError) in
            try MultistatusReader.parse(reading: read, each: each)
        }
    }

    /// `HTTP/1.1 200 OK` → 200.
    static func statusCode(_ line: String) -> Int? {
        let parts = line.trimmingWhitespace().split(separator: " ")
        guard parts.count >= 2 else { return nil }
        return Int(parts[1])
    }
}
