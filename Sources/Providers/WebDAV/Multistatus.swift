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

    /// Parses a body (checked to be valid UTF-8 first: see `UTF8Check`) as it is read from
    /// `stream`, handing each response to `each` as soon as it ends: a 100,000-entry listing
    /// never exists whole in memory, neither as text nor as resources.
    static func parse(_ stream: InputStream, each: (DAVResource) -> Void) throws(MultistatusError) {
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        try parse(reading: {
            let n = buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: $0.count) }
            return n > 0 ? Data(buffer[0..<n]) : nil
        }, each: each)
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
