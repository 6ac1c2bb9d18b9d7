/// HTTP dates (RFC 9110 §5.6.7) without DateFormatter: IMF-fixdate / RFC 1123
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`). All are UTC.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Seconds since 1970, or nil when `string` is none of the three forms.
    static func parse(_ string: String) -> Double? {
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

    private static func clock(_ s: String) -> (Int, Int, Int)? {
        let p = s.split(separator: ":").compactMap { Int($0) }
        return p.count == 3 ? (p[0], p[1], p[2]) : nil
    }

}
