/// The columns nginx autoindex prints after each link: `21-Nov-2026 07:47   1500` (GMT unless
/// `autoindex_localtime on`; the size in bytes with `autoindex_exact_size on`, the default, else
/// rounded like `2K`; `-` for folders). nginx ends its lines with CRLF.
///
/// Only this format is read: Apache's FancyIndexing columns (`2026-11-21 07:47  1.5K`) are in the
/// server's local time zone, which the page does not state, and its sizes are rounded.
enum NginxColumns {
    struct Columns: Equatable {
        /// Exact bytes, or nil when the column is `-` or rounded (`2K`, `1.5M`).
        var size: Int64?
        /// Seconds since 1970, floored to the minute.
        var modified: Double
    }

    private static let months: [[UInt8]] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .map { Array($0.utf8) }

    /// Bytes, not Characters: called once per link of pages with thousands of links.
    static func parse(_ tail: Substring) -> Columns? {
        var fields: [ArraySlice<UInt8>] = []
        let bytes = Array(tail.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x20 || b == 0x09 || b == 0x0D { i += 1; continue }
            let start = i
            while i < bytes.count, bytes[i] != 0x20, bytes[i] != 0x09, bytes[i] != 0x0D { i += 1 }
            fields.append(bytes[start..<i])
            if fields.count > 3 { return nil }
        }
        // dd-Mon-yyyy HH:MM size
        guard fields.count == 3 else { return nil }
        let date = Array(fields[0]), time = Array(fields[1])
        guard date.count == 11, date[2] == UInt8(ascii: "-"), date[6] == UInt8(ascii: "-"),
              time.count == 5, time[2] == UInt8(ascii: ":"),
              let day = number(date[0..<2]), let year = number(date[7..<11]),
              let hour = number(time[0..<2]), let minute = number(time[3..<5]),
              let month = months.firstIndex(where: { $0.elementsEqual(date[3..<6]) }),
              (1...31).contains(day), hour < 24, minute < 60 else { return nil }
        guard let modified = CivilDate.seconds(year: Int(year), month: month + 1, day: Int(day),
                                               hour: Int(hour), minute: Int(minute)) else { return nil }
        return Columns(size: number(fields[2]), modified: modified)
    }

    /// Decimal digits only (no sign, no suffix like "2K"); nil otherwise.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for d in digits {
            guard d >= UInt8(ascii: "0"), d <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(d - UInt8(ascii: "0"))
        }
        return value
    }

}
