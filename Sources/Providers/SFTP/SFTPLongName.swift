import FavFSCore
import Foundation

/// One line of an SFTP long listing as libcurl writes it: the server's `longname` (OpenSSH's
/// `ls -l` style: `-rw-r--r--    1 user group   1234 Nov 21 07:47 name`), followed by
/// ` -> target` for a symlink (libcurl reads the link and appends it).
///
/// The name is everything after the date, byte for byte: names with spaces, tabs, unicode or
/// `->` survive. Only a symlink whose name or target itself contains " -> " is ambiguous; the
/// listing then settles it with the exact names (see `SFTPListing`).
struct SFTPLongName: Equatable, Sendable {
    /// The mode string's type letter: `-` file, `d` folder, `l` symlink, others (`c b p s`) too.
    var type: Character
    /// Permission bits from the mode string (including setuid/setgid/sticky).
    var permissions: UInt16
    /// The size field (for a symlink: the length of its target).
    var size: Int64
    /// The date as the server wrote it: `Nov 21 07:47` (recent) or `Mar  4  2019` (older than
    /// six months or in the future), in the server's local time zone.
    var dateText: String
    /// What follows the date: the name, or `name -> target` for a symlink.
    var rest: String

    var kind: ItemKind? {
        switch type {
        case "-": return .file
        case "d": return .folder
        case "l": return .symlink
        default: return nil
        }
    }

    /// Splits `rest` of a symlink at the only " -> "; nil when there is none or more than one.
    var unambiguousSymlink: (name: String, target: String)? {
        let parts = rest.components(separatedBy: " -> ")
        guard parts.count == 2 else { return nil }
        return (parts[0], parts[1])
    }

    // MARK: parsing

    /// Parses one line (without its newline); nil when it is not a long-listing line.
    static func parse(_ line: Substring) -> SFTPLongName? {
        let bytes = Array(line.utf8)
        // The mode: a type letter and nine permission letters (an ACL mark may follow).
        guard bytes.count > 10, let perms = permissions(bytes[1...9]) else { return nil }
        let type = Character(UnicodeScalar(bytes[0]))
        guard "-dlcbps".contains(type) else { return nil }
        // The size is the last number before the date; user and group may be any width. Look
        // for " <digits> <12-byte date> " after the mode: the first such place is the date
        // (owner and group names do not look like dates).
        var i = 10
        while i + 13 < bytes.count {
            if bytes[i] == space, let (dateEnd, sizeStart) = dateAt(bytes, i + 1), sizeStart > 10,
               let size = Int64(String(decoding: bytes[sizeStart..<i], as: UTF8.self)) {
                let date = String(decoding: bytes[(i + 1)..<dateEnd], as: UTF8.self)
                let rest = String(decoding: bytes[(dateEnd + 1)...], as: UTF8.self)
                return SFTPLongName(type: type, permissions: perms, size: size, dateText: date, rest: rest)
            }
            i += 1
        }
        return nil
    }

    private static let space = UInt8(ascii: " ")

    /// Whether a 12-byte date (`Mmm dd HH:MM` or `Mmm dd  YYYY`) followed by a space starts at
    /// `start`, preceded by " <digits> ". Returns the date's end and where the digits begin.
    private static func dateAt(_ b: [UInt8], _ start: Int) -> (Int, Int)? {
        let end = start + 12
        guard end < b.count, b[end] == space else { return nil }
        func isDigit(_ x: UInt8) -> Bool { x >= 48 && x <= 57 }
        func isLetter(_ x: UInt8) -> Bool { (x | 0x20) >= 97 && (x | 0x20) <= 122 }
        let d = Array(b[start..<end])
        guard isLetter(d[0]), isLetter(d[1]), isLetter(d[2]), d[3] == space,
              d[4] == space || isDigit(d[4]), isDigit(d[5]), d[6] == space else { return nil }
        let time = isDigit(d[7]) && isDigit(d[8]) && d[9] == UInt8(ascii: ":") && isDigit(d[10]) && isDigit(d[11])
        let year = d[7] == space && isDigit(d[8]) && isDigit(d[9]) && isDigit(d[10]) && isDigit(d[11])
        guard time || year else { return nil }
        // " <digits>" right before the date.
        let spaceBefore = start - 1
        guard spaceBefore > 0, b[spaceBefore] == space else { return nil }
        var digitsStart = spaceBefore
        while digitsStart > 0 && isDigit(b[digitsStart - 1]) { digitsStart -= 1 }
        guard digitsStart < spaceBefore, digitsStart > 0, b[digitsStart - 1] == space else { return nil }
        return (end, digitsStart)
    }

    /// `rwxr-sr-t` → 0o3755 style bits; nil for anything else.
    private static func permissions(_ letters: ArraySlice<UInt8>) -> UInt16? {
        let l = Array(letters)
        var bits: UInt16 = 0
        let special: [UInt16] = [0o4000, 0o2000, 0o1000]
        for triple in 0..<3 {
            let shift = UInt16(6 - triple * 3)
            let (r, w, x) = (l[triple * 3], l[triple * 3 + 1], l[triple * 3 + 2])
            switch r { case UInt8(ascii: "r"): bits |= 4 << shift; case UInt8(ascii: "-"): break; default: return nil }
            switch w { case UInt8(ascii: "w"): bits |= 2 << shift; case UInt8(ascii: "-"): break; default: return nil }
            switch x {
            case UInt8(ascii: "x"): bits |= 1 << shift
            case UInt8(ascii: "-"): break
            case UInt8(ascii: "s") where triple < 2, UInt8(ascii: "t") where triple == 2: bits |= 1 << shift | special[triple]
            case UInt8(ascii: "S") where triple < 2, UInt8(ascii: "T") where triple == 2: bits |= special[triple]
            default: return nil
            }
        }
        return bits
    }

    // MARK: dates

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date as seconds since 1970, read in `timeZone`. A date with a time has no year: it is
    /// the latest such date not after `now` (plus a day for clock skew), as `ls` shows times only
    /// for the last six months. A date with a year has no time: midnight is taken.
    static func date(_ text: String, timeZone: TimeZone, now: Date = Date()) -> Double? {
        let b = Array(text.utf8)
        guard b.count == 12, let month = months.firstIndex(of: String(decoding: b[0..<3], as: UTF8.self).lowercased()),
              let day = Int(String(decoding: b[4..<6], as: UTF8.self).trimmingCharacters(in: .whitespaces)) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        var c = DateComponents()
        c.month = month + 1
        c.day = day
        if b[9] == UInt8(ascii: ":") {
            guard let h = Int(String(decoding: b[7..<9], as: UTF8.self)), let m = Int(String(decoding: b[10..<12], as: UTF8.self)) else { return nil }
            c.hour = h; c.minute = m
            let thisYear = calendar.component(.year, from: now)
            c.year = thisYear
            guard var date = calendar.date(from: c) else { return nil }
            if date > now.addingTimeInterval(86_400) {
                c.year = thisYear - 1
                date = calendar.date(from: c) ?? date
            }
            return date.timeIntervalSince1970
        }
        guard let year = Int(String(decoding: b[8..<12], as: UTF8.self)) else { return nil }
        c.year = year; c.hour = 0; c.minute = 0
        return calendar.date(from: c)?.timeIntervalSince1970
    }
}
