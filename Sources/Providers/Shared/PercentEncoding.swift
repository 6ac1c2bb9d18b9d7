/// Percent-encoding with the strict RFC 3986 set: only unreserved bytes (`A-Z a-z 0-9 - . _ ~`)
/// stay literal, every other byte becomes `%XX` (uppercase hex). It is what SigV4 signs, and it
/// keeps `; ? # % + & =` part of a name in any URL and query.
enum PercentEncoding {
    /// - Parameters:
    ///   - keepSlash: leave `/` literal (whole paths rather than one component).
    ///   - encodeDots: encode `.` too (libcurl drops `.` and `..` segments from SFTP URLs).
    static func strict(_ s: String, keepSlash: Bool = false, encodeDots: Bool = false) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        for b in s.utf8 {
            if isUnreserved(b) && !(encodeDots && b == UInt8(ascii: ".")) || (keepSlash && b == UInt8(ascii: "/")) {
                out.append(b)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `%XX` escapes (and `+` as a space when `plusIsSpace`: S3 listings made with
    /// `encoding-type=url`); nil for a bad escape or bytes that are not UTF-8.
    static func decode(_ s: ArraySlice<UInt8>, plusIsSpace: Bool = false) -> String? {
        guard s.contains(UInt8(ascii: "%")) || (plusIsSpace && s.contains(UInt8(ascii: "+"))) else {
            return String(validating: s, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.count)
        var it = s
        while let b = it.popFirst() {
            switch b {
            case UInt8(ascii: "+") where plusIsSpace: bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard it.count >= 2, let hi = hexValue(it.popFirst()!), let lo = hexValue(it.popFirst()!) else { return nil }
                bytes.append(hi << 4 | lo)
            default: bytes.append(b)
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

    static func isUnreserved(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
