import Foundation

/// A D-Bus value with its type (the wire format of the D-Bus specification, "Type System" and
/// "Message Format"): what favfs sends (`Notify`'s `susssasa{sv}i`) and reads back (header
/// fields, a method return's `s` or `u`, an error's message).
public indirect enum DBusValue: Equatable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// `elementSignature`: the elements' type, needed for an empty array.
    case array(elementSignature: String, [DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case structure([DBusValue])
    case variant(DBusValue)

    public var signature: String {
        switch self {
        case .byte: return "y"
        case .boolean: return "b"
        case .int32: return "i"
        case .uint32: return "u"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .array(let e, _): return "a" + e
        case .dictEntry(let k, let v): return "{" + k.signature + v.signature + "}"
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .variant: return "v"
        }
    }

    /// `a{sv}` from a dictionary, in key order (stable bytes).
    public static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
        .array(elementSignature: "{sv}", entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value)) })
    }

    public static func strings(_ list: [String]) -> DBusValue { .array(elementSignature: "s", list.map { .string($0) }) }

    public var stringValue: String? {
        switch self {
        case .string(let s), .objectPath(let s), .signature(let s): return s
        default: return nil
        }
    }

    public var uint32Value: UInt32? { if case .uint32(let u) = self { return u }; return nil }
}

public struct DBusError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Writes values little-endian, aligned from the start of the message.
struct DBusWriter {
    var bytes: [UInt8] = []

    mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    mutating func putUInt32(_ v: UInt32) {
        pad(to: 4)
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ value: DBusValue) throws {
        switch value {
        case .byte(let b): bytes.append(b)
        case .boolean(let b): putUInt32(b ? 1 : 0)
        case .int32(let i): putUInt32(UInt32(bitPattern: i))
        case .uint32(let u): putUInt32(u)
        case .string(let s), .objectPath(let s):
            let utf8 = Array(s.utf8)
            guard !utf8.contains(0) else { throw DBusError("a D-Bus string cannot hold a NUL byte") }
            putUInt32(UInt32(utf8.count)); bytes += utf8; bytes.append(0)
        case .signature(let s):
            let utf8 = Array(s.utf8)
            guard utf8.count <= 255 else { throw DBusError("signature too long") }
            bytes.append(UInt8(utf8.count)); bytes += utf8; bytes.append(0)
        case .array(let element, let items):
            putUInt32(0)
            let lengthAt = bytes.count - 4
            // Padding to the first element's alignment is not part of the length, even when empty.
            pad(to: DBusSignature.alignment(of: element))
            let start = bytes.count
            for item in items {
                guard item.signature == element else { throw DBusError("array of \(element) holds a \(item.signature)") }
                try write(item)
            }
            let length = UInt32(bytes.count - start)
            withUnsafeBytes(of: length.littleEndian) { for (i, b) in $0.enumerated() { bytes[lengthAt + i] = b } }
        case .dictEntry(let k, let v):
            pad(to: 8); try write(k); try write(v)
        case .structure(let fields):
            pad(to: 8); for f in fields { try write(f) }
        case .variant(let inner):
            try write(.signature(inner.signature)); try write(inner)
        }
    }
}

/// Reads values of a message, in its byte order, aligned from the start of the message.
struct DBusReader {
    let bytes: [UInt8]
    var offset: Int
    let littleEndian: Bool

    init(_ bytes: [UInt8], offset: Int = 0, littleEndian: Bool = true) {
        self.bytes = bytes; self.offset = offset; self.littleEndian = littleEndian
    }

    mutating func align(_ n: Int) throws {
        let next = (offset + n - 1) / n * n
        guard next <= bytes.count else { throw DBusError("message truncated") }
        offset = next
    }

    mutating func take(_ n: Int) throws -> ArraySlice<UInt8> {
        guard n >= 0, offset + n <= bytes.count else { throw DBusError("message truncated") }
        defer { offset += n }
        return bytes[offset..<offset + n]
    }

    mutating func uint32() throws -> UInt32 {
        try align(4)
        let b = try take(4).map(UInt32.init)
        return littleEndian ? b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24 : b[3] | b[2] << 8 | b[1] << 16 | b[0] << 24
    }

    mutating func read(_ signature: Substring) throws -> DBusValue {
        guard let c = signature.first else { throw DBusError("empty signature") }
        switch c {
        case "y": return .byte(try take(1).first!)
        case "b": return .boolean(try uint32() != 0)
        case "i": return .int32(Int32(bitPattern: try uint32()))
        case "u": return .uint32(try uint32())
        case "s", "o":
            let n = Int(try uint32())
            let s = String(decoding: try take(n), as: UTF8.self)
            _ = try take(1)
            return c == "s" ? .string(s) : .objectPath(s)
        case "g":
            let n = Int(try take(1).first!)
            let s = String(decoding: try take(n), as: UTF8.self)
            _ = try take(1)
            return .signature(s)
        case "v":
            guard case .signature(let sig) = try read("g") else { throw DBusError("bad variant") }
            return .variant(try read(Substring(sig)))
        case "a":
            let element = try DBusSignature.first(signature.dropFirst())
            let length = Int(try uint32())
            try align(DBusSignature.alignment(of: String(element)))
            let end = offset + length
            guard end <= bytes.count else { throw DBusError("message truncated") }
            var items: [DBusValue] = []
            while offset < end { items.append(try read(element)) }
            return .array(elementSignature: String(element), items)
        case "(", "{":
            try align(8)
            var inner = try DBusSignature.first(signature).dropFirst().dropLast()
            var fields: [DBusValue] = []
            while !inner.isEmpty {
                let one = try DBusSignature.first(inner)
                fields.append(try read(one))
                inner = inner.dropFirst(one.count)
            }
            if c == "{" {
                guard fields.count == 2 else { throw DBusError("bad dict entry") }
                return .dictEntry(fields[0], fields[1])
            }
            return .structure(fields)
        default:
            throw DBusError("type '\(c)' is not supported")
        }
    }

    /// The values of a whole signature (a body).
    mutating func readAll(_ signature: String) throws -> [DBusValue] {
        var rest = Substring(signature)
        var values: [DBusValue] = []
        while !rest.isEmpty {
            let one = try DBusSignature.first(rest)
            values.append(try read(one))
            rest = rest.dropFirst(one.count)
        }
        return values
    }
}

enum DBusSignature {
    static func alignment(of signature: String) -> Int {
        switch signature.first {
        case "y", "g", "v": return 1
        case "n", "q": return 2
        case "x", "t", "d", "(", "{": return 8
        default: return 4
        }
    }

    /// The first complete type of `signature`.
    static func first(_ signature: Substring) throws -> Substring {
        guard let c = signature.first else { throw DBusError("empty signature") }
        switch c {
        case "a": return signature.prefix(1 + (try first(signature.dropFirst())).count)
        case "(", "{":
            var depth = 0
            for (i, ch) in signature.enumerated() {
                if ch == "(" || ch == "{" { depth += 1 }
                if ch == ")" || ch == "}" { depth -= 1; if depth == 0 { return signature.prefix(i + 1) } }
            }
            throw DBusError("unbalanced signature \(signature)")
        default: return signature.prefix(1)
        }
    }
}

/// One D-Bus message: a method call favfs sends, or what the bus sends back.
public struct DBusMessage: Equatable, Sendable {
    public enum Kind: UInt8, Sendable { case methodCall = 1, methodReturn = 2, error = 3, signal = 4 }
    enum Field: UInt8 { case path = 1, interface, member, errorName, replySerial, destination, sender, signature, unixFDs }

    public var kind: Kind
    public var flags: UInt8 = 0
    public var serial: UInt32
    public var path: String?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var replySerial: UInt32?
    public var destination: String?
    public var sender: String?
    public var body: [DBusValue] = []

    public var signature: String { body.map(\.signature).joined() }

    public static func methodCall(serial: UInt32, destination: String, path: String, interface: String, member: String,
                                  body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .methodCall, serial: serial, path: path, interface: interface, member: member,
                    destination: destination, body: body)
    }

    /// The wire bytes, little-endian.
    public func encoded() throws -> [UInt8] {
        var body = DBusWriter()
        for v in self.body { try body.write(v) }
        var fields: [DBusValue] = []
        func field(_ f: Field, _ v: DBusValue?) { if let v { fields.append(.structure([.byte(f.rawValue), .variant(v)])) } }
        field(.path, path.map { .objectPath($0) })
        field(.interface, interface.map { .string($0) })
        field(.member, member.map { .string($0) })
        field(.errorName, errorName.map { .string($0) })
        field(.replySerial, replySerial.map { .uint32($0) })
        field(.destination, destination.map { .string($0) })
        field(.sender, sender.map { .string($0) })
        if !self.body.isEmpty { field(.signature, .signature(signature)) }
        var w = DBusWriter()
        w.bytes = [UInt8(ascii: "l"), kind.rawValue, flags, 1]
        w.putUInt32(UInt32(body.bytes.count))
        w.putUInt32(serial)
        try w.write(.array(elementSignature: "(yv)", fields))
        w.pad(to: 8)
        // The body starts 8-aligned, so its alignment computed from 0 holds.
        return w.bytes + body.bytes
    }

    /// The total length of the message whose first 16 bytes are `head`.
    static func length(ofHead head: [UInt8]) throws -> Int {
        guard head.count >= 16 else { throw DBusError("message truncated") }
        let le: Bool
        switch head[0] {
        case UInt8(ascii: "l"): le = true
        case UInt8(ascii: "B"): le = false
        default: throw DBusError("bad byte order \(head[0])")
        }
        var r = DBusReader(head, offset: 4, littleEndian: le)
        let bodyLength = Int(try r.uint32())
        _ = try r.uint32()
        let fieldsLength = Int(try r.uint32())
        let headerEnd = (16 + fieldsLength + 7) / 8 * 8
        let total = headerEnd + bodyLength
        guard total <= 1 << 27 else { throw DBusError("message too long") }
        return total
    }

    /// Reads one whole message.
    public static func decode(_ bytes: [UInt8]) throws -> DBusMessage {
        _ = try length(ofHead: Array(bytes.prefix(16)))
        let le = bytes[0] == UInt8(ascii: "l")
        guard let kind = Kind(rawValue: bytes[1]) else { throw DBusError("unknown message type \(bytes[1])") }
        var r = DBusReader(bytes, offset: 4, littleEndian: le)
        let bodyLength = Int(try r.uint32())
        let serial = try r.uint32()
        guard case .array(_, let fields) = try r.read("a(yv)") else { throw DBusError("bad header") }
        var m = DBusMessage(kind: kind, flags: bytes[2], serial: serial)
        var signature = ""
        for case .structure(let f) in fields {
            guard f.count == 2, case .byte(let code) = f[0], case .variant(let v) = f[1] else { continue }
            switch Field(rawValue: code) {
            case .path: m.path = v.stringValue
            case .interface: m.interface = v.stringValue
            case .member: m.member = v.stringValue
            case .errorName: m.errorName = v.stringValue
            case .replySerial: m.replySerial = v.uint32Value
            case .destination: m.destination = v.stringValue
            case .sender: m.sender = v.stringValue
            case .signature: signature = v.stringValue ?? ""
            default: break  // unknown fields are ignored (the specification says so)
            }
        }
        try r.align(8)
        guard r.offset + bodyLength <= bytes.count else { throw DBusError("message truncated") }
        var body = DBusReader(Array(bytes[r.offset..<r.offset + bodyLength]), littleEndian: le)
        // A body of types this client does not read (a signal's, say) is left out, not an error.
        m.body = (try? body.readAll(signature)) ?? []
        return m
    }
}
