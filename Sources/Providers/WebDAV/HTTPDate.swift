/// HTTP dates (RFC 9110 §5.6.7) without DateFormatter: IMF-fixdate / RFC 1123
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`). All are UTC.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Seconds since 1970, or nil when `string` is none of the three forms.
    static func parse(_ string: String) -> Double? {
        if let seconds = parseFixdate(string) { return seconds }
        let tokens = string.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map(String.init)
        var day: Int?, month: Int?, year: Int?, time: (Int, Int, Int)?
        switch tokens.count {
        case 6 where tokens[5].uppercased() == "GMT" || tokens[5] == "UTC":  // RFC 1123
            day = Int(tokens[1]); month = monthIndex(tokens[2]); year = Int(tokens[3]); time = clock(tokens[4])
        case 4:  // RFC 850
            let dmy = tokens[1].split(separator: "-").map(String.init)
            guard dmy.count == 3 else { return nil }
            day = Int(dmy[0]); month = monthIndex(dmy[1]); time = clock(tokens[2])
            if let y = Int(dmy[2]) { year = dmy[2].count == 2 ? (y < 70 ? 2000 + y : 1900 + y) : y }
        case 5:  // asctime
            month = monthIndex(tokens[1]); day = Int(tokens[2]); time = clock(tokens[3]); year = Int(tokens[4])
        default:
            return nil
        }
        guard let day, let month, let year, let time else { return nil }
        return CivilDate.seconds(year: year, month: month + 1, day: day, hour: time.0, minute: time.1, second: time.2)
    }

    private static func monthIndex(_ s: String) -> Int? { months.firstIndex(of: s.lowercased()) }

    /// The form servers send (`Sun, 06 Nov 1994 08:49:37 GMT`, always 29 bytes), read from its
    /// bytes: every entry of a listing has one, and splitting it into Strings cost more than
    /// parsing the XML around it. Anything else goes the general way.
    private static func parseFixdate(_ string: String) -> Double? {
        string.utf8.withContiguousStorageIfAvailable { b -> Double? in
            guard b.count == 29, b[3] == UInt8(ascii: ","), b[4] == 0x20, b[7] == 0x20, b[11] == 0x20, b[16] == 0x20,
                  b[19] == UInt8(ascii: ":"), b[22] == UInt8(ascii: ":"), b[25] == 0x20,
                  b[26] == UInt8(ascii: "G"), b[27] == UInt8(ascii: "M"), b[28] == UInt8(ascii: "T"),
                  let day = digits(b, 5, 2), let year = digits(b, 12, 4), let hour = digits(b, 17, 2),
                  let minute = digits(b, 20, 2), let second = digits(b, 23, 2) else { return nil }
            let name = String(decoding: b[8..<11], as: UTF8.self).lowercased()
            guard let month = months.firstIndex(of: name) else { return nil }
            return CivilDate.seconds(year: year, month: month + 1, day: day, hour: hour, minute: minute, second: second)
        } ?? nil
    }

    private static func digits(_ b: UnsafeBufferPointer<UInt8>, _ at: Int, _ count: Int) -> Int? {
        var value = 0
        for i in at..<(at + count) {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) else { return nil }
            value = value * 10 + Int(b[i] - UInt8(ascii: "0"))
        }
        return value
    }

    private static func clock(_ s: String) -> (Int, Int, Int)? {
        let p = s.split(separator: ":").compactMap { Int($0) }
        return p.count == 3 ? (p[0], p[1], p[2]) : nil
    }

}
