import Foundation

/// LIST output, for servers without MLSD: Unix `ls -l` lines and DOS/IIS lines.
///
/// LIST is meant for people, not programs, so it is parsed loosely and loses precision: times
/// have minutes (a day, for Unix entries older than about six months, which show a year instead
/// of a time), carry no time zone (taken as UTC, as pyftpdlib and vsftpd write them by
/// default), and a name that starts with spaces loses them.
enum FTPListing {
    private static let months = ["jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
                                 "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12]

    /// Splits a listing into lines at CRLF or LF (names with a lone CR or a tab stay whole).
    static func lines(_ text: String) -> [String] {
        text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(String.init)
    }

    /// Parses a LIST body; `now` decides the year of Unix entries that show only a time.
    static func parse(_ body: Data, now: Date = Date()) -> [FTPEntry] {
        let text = String(decoding: body, as: UTF8.self)
        return lines(text).compactMap { parseLine($0, now: now) }
    }

    /// One line of either style; nil for `total N` and anything unrecognised.
    static func parseLine(_ line: String, now: Date = Date()) -> FTPEntry? {
        parseDOS(line) ?? parseUnix(line, now: now)
    }

    // MARK: Unix

    /// `drwxr-xr-x 2 owner group 4096 Nov 21 07:49 name` or `... 4096 Nov 21  2024 name`;
    /// symlinks `lrwxrwxrwx ... name -> target`. The owner and group columns may be missing or
    /// numeric; the date (month name, day, time or year) is found after the size.
    static func parseUnix(_ line: String, now: Date) -> FTPEntry? {
        guard let type = line.first, "-dlbcps".contains(type) else { return nil }
        // Tokens with their end positions; the name is the text after the date, kept verbatim.
        var tokens: [(text: Substring, end: String.Index)] = []
        var i = line.startIndex
        while i < line.endIndex, tokens.count < 9 {
            while i < line.endIndex, line[i] == " " { i = line.index(after: i) }
            guard i < line.endIndex else { break }
            let start = i
            while i < line.endIndex, line[i] != " " { i = line.index(after: i) }
            tokens.append((line[start..<i], i))
        }
        // Find "SIZE MON DAY TIME|YEAR", the size at index 2 or later (perms, links, owner?, group?).
        guard tokens.count >= 6 else { return nil }
        for m in 3..<(tokens.count - 2) {
            guard let month = months[tokens[m].text.lowercased()], let size = Int64(tokens[m - 1].text),
                  let day = Int(tokens[m + 1].text), (1...31).contains(day) else { continue }
            let when = tokens[m + 2].text
            let stamp: String
            var modified: Double?
            if let colon = when.firstIndex(of: ":"), let hour = Int(when[..<colon]), let minute = Int(when[when.index(after: colon)...]) {
                // No year: the most recent such date not more than a day ahead (clock skew).
                var year = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: now).year!
                let limit = now.timeIntervalSince1970 + 86400
                if let t = FTPTime.seconds(year: year, month: month, day: day, hour: hour, minute: minute), t > limit { year -= 1 }
                modified = FTPTime.seconds(year: year, month: month, day: day, hour: hour, minute: minute)
                stamp = String(format: "%04d%02d%02d%02d%02d", year, month, day, hour, minute)
            } else if let year = Int(when), when.count == 4 {
                modified = FTPTime.seconds(year: year, month: month, day: day)
                stamp = String(format: "%04d%02d%02d", year, month, day)
            } else {
                continue
            }
            // The name starts after exactly one space (more are part of the name).
            let afterDate = tokens[m + 2].end
            guard afterDate < line.endIndex else { return nil }
            var name = String(line[line.index(after: afterDate)...])
            var kind: FTPEntry.Kind
            switch type {
            case "d": kind = .folder
            case "l":
                var target: String?
                if let arrow = name.range(of: " -> ") {
                    target = String(name[arrow.upperBound...])
                    name = String(name[..<arrow.lowerBound])
                }
                kind = .symlink(target: target)
            default: kind = .file
            }
            if name == "." || name == ".." { kind = .selfOrParent }
            guard !name.isEmpty else { return nil }
            return FTPEntry(name: name, kind: kind, size: size, modifiedStamp: stamp, modified: modified,
                            unique: nil, permissions: unixPermissions(line.prefix(10)))
        }
        return nil
    }

    /// `rwxr-x---` (after the type letter) → 0o750, with setuid/setgid/sticky.
    static func unixPermissions(_ field: Substring) -> UInt16? {
        let chars = Array(field.dropFirst())
        guard chars.count == 9 else { return nil }
        var mode: UInt16 = 0
        for (index, c) in chars.enumerated() {
            let bit = UInt16(1) << UInt16(8 - index)
            switch c {
            case "r", "w", "x": mode |= bit
            case "s", "t": mode |= bit; fallthrough
            case "S", "T":
                if index == 2 { mode |= 0o4000 } else if index == 5 { mode |= 0o2000 } else if index == 8 { mode |= 0o1000 }
            case "-": break
            default: return nil
            }
        }
        return mode
    }

    // MARK: DOS / IIS

    /// `01-02-24  03:04PM       <DIR>          name` or `01-02-24  03:04PM              1234 name`
    /// (also 4-digit years and 24-hour times).
    static func parseDOS(_ line: String) -> FTPEntry? {
        let scalars = Array(line.unicodeScalars)
        var i = 0
        func number(_ minDigits: Int, _ maxDigits: Int) -> Int? {
            var n = 0, count = 0
            while i < scalars.count, count < maxDigits, (48...57).contains(scalars[i].value) {
                n = n * 10 + Int(scalars[i].value - 48); count += 1; i += 1
            }
            return count >= minDigits ? n : nil
        }
        func expect(_ c: Character) -> Bool {
            guard i < scalars.count, Character(scalars[i]) == c else { return false }
            i += 1; return true
        }
        func spaces() -> Int { let s = i; while i < scalars.count, scalars[i] == " " { i += 1 }; return i - s }
        guard let month = number(2, 2), expect("-"), let day = number(2, 2), expect("-") else { return nil }
        let yearStart = i
        guard var year = number(2, 4) else { return nil }
        let yearDigits = i - yearStart
        guard yearDigits == 2 || yearDigits == 4, spaces() > 0,
              var hour = number(1, 2), expect(":"), let minute = number(2, 2) else { return nil }
        if yearDigits == 2 { year += year < 70 ? 2000 : 1900 }
        if i + 1 < scalars.count, ["AM", "PM"].contains(String(String.UnicodeScalarView(scalars[i...(i + 1)])).uppercased()) {
            let pm = String(scalars[i]).uppercased() == "P"
            hour = hour % 12 + (pm ? 12 : 0)
            i += 2
        }
        guard spaces() > 0 else { return nil }
        var kind = FTPEntry.Kind.file
        var size: Int64? = 0
        if String(String.UnicodeScalarView(scalars[i..<min(i + 5, scalars.count)])) == "<DIR>" {
            kind = .folder
            i += 5
            guard spaces() > 0 else { return nil }
        } else {
            let start = i
            while i < scalars.count, scalars[i] != " " { i += 1 }
            size = Int64(String(String.UnicodeScalarView(scalars[start..<i])).replacingOccurrences(of: ",", with: ""))
            guard size != nil, i < scalars.count else { return nil }
            i += 1
        }
        let name = String(String.UnicodeScalarView(scalars[i...]))
        guard !name.isEmpty else { return nil }
        if name == "." || name == ".." { kind = .selfOrParent }
        let modified = FTPTime.seconds(year: year, month: month, day: day, hour: hour, minute: minute)
        guard modified != nil else { return nil }
        return FTPEntry(name: name, kind: kind, size: size,
                        modifiedStamp: String(format: "%04d%02d%02d%02d%02d", year, month, day, hour, minute),
                        modified: modified, unique: nil, permissions: nil)
    }
}
