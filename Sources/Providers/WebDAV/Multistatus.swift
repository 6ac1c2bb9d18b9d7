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

    /// `HTTP/1.1 200 OK` → 200, read from the line's UTF-8 bytes in place: one per response or
    /// propstat of a listing (a million of them for a folder of a million entries).
    static func statusCode(utf8 line: [UInt8]) -> Int? {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = line.firstIndex(where: { !isSpace($0) }), let last = line.lastIndex(where: { !isSpace($0) }) else { return nil }
        // The second of the words the trimmed line has between spaces.
        var i = first
        while i <= last && line[i] != 0x20 { i += 1 }
        while i <= last && line[i] == 0x20 { i += 1 }
        guard i <= last else { return nil }
        // Its digits, without a String made for each line.
        var code = 0, digits = 0
        while i <= last && line[i] != 0x20 {
            guard (0x30...0x39).contains(line[i]), digits < 9 else { return nil }
            code = code * 10 + Int(line[i] - 0x30)
            digits += 1
            i += 1
        }
        return code
    }
}
