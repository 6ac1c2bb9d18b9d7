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
        guard let day, let month, let year, let time, (1...31).contains(day),
              (0...23).contains(time.0), (0...59).contains(time.1), (0...60).contains(time.2) else { return nil }
        let days = daysFromCivil(year: year, month: month + 1, day: day)
        return Double(days * 86_400 + time.0 * 3600 + time.1 * 60 + time.2)
    }

    private static func monthIndex(_ s: String) -> Int? { months.firstIndex(of: s.lowercased()) }

    private static func clock(_ s: String) -> (Int, Int, Int)? {
        let p = s.split(separator: ":").compactMap { Int($0) }
        return p.count == 3 ? (p[0], p[1], p[2]) : nil
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
