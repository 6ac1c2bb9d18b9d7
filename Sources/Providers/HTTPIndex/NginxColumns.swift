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

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func parse(_ tail: Substring) -> Columns? {
        let fields = tail.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
        guard fields.count == 3 else { return nil }
        let date = fields[0].split(separator: "-")
        let time = fields[1].split(separator: ":")
        guard date.count == 3, time.count == 2, date[0].count == 2, date[2].count == 4,
              let day = Int(date[0]), let year = Int(date[2]), months.contains(String(date[1])),
              let hour = Int(time[0]), let minute = Int(time[1]) else { return nil }
        // "Sat, 21 Nov 2026 07:47:00 GMT": HTTPDate ignores the weekday.
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let imf = "Mon, \(two(day)) \(date[1]) \(year) \(two(hour)):\(two(minute)):00 GMT"
        guard let modified = HTTPDate.parse(imf) else { return nil }
        let sizeField = fields[2]
        let size = sizeField.allSatisfy({ $0.isASCII && $0.isNumber }) ? Int64(sizeField) : nil
        return Columns(size: size, modified: modified)
    }
}
