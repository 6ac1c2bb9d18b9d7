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
