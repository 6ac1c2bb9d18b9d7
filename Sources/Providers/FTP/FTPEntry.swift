import FavFSCore
import Foundation

/// One entry of an FTP listing (MLSD, MLST or LIST), before it becomes an `Item`.
struct FTPEntry: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case file, folder
        /// A symbolic link; the target when the server says it.
        case symlink(target: String?)
        /// `.` / `..` (MLSD `cdir` / `pdir`): never an item.
        case selfOrParent
    }

    var name: String
    var kind: Kind
    var size: Int64?
    /// The modification time as the server wrote it (MLSD `modify=` verbatim; LIST normalized to
    /// `YYYYMMDDHHMM` or `YYYYMMDD`): part of the synthetic version.
    var modifiedStamp: String?
    /// Seconds since 1970 (UTC).
    var modified: Double?
    /// MLSD `unique=` (device and inode on Unix servers): changes when a file is replaced by a rename.
    var unique: String?
    /// MLSD `unix.mode=` (octal).
    var permissions: UInt16?

    /// The synthetic version of a file: size, modification stamp and (MLSD) unique id, so a
    /// replacement by rename within the same second still changes it. Listings, MLST and the
    /// items returned after writes all build it here, from the same facts, so they agree.
    /// Its precision is the server's: a second with MLSD (pyftpdlib, vsftpd), a minute with LIST
    /// (a day for files older than six months).
    var version: String? {
        guard case .file = kind, let size else { return nil }
        var v = "\(size)-\(modifiedStamp ?? "?")"
        if let unique { v += "-\(unique)" }
        return v
    }

    /// The item at `identifier`, or nil for `.`/`..`.
    func item(_ identifier: ItemIdentifier) -> Item? {
        switch kind {
        case .selfOrParent:
            return nil
        case .folder:
            return Item(identifier: identifier, kind: .folder, size: 0, modified: modified, permissions: permissions)
        case .file:
            // A negative size from the server (a broken LIST or MLSD line) shows as 0.
            return Item(identifier: identifier, kind: .file, size: max(0, size ?? 0), modified: modified, version: version,
                        permissions: permissions)
        case .symlink(let target):
            return Item(identifier: identifier, kind: .symlink, size: max(0, size ?? Int64(target?.utf8.count ?? 0)), modified: modified,
                        permissions: permissions, symlinkTarget: target)
        }
    }
}

/// UTC calendar arithmetic for listing times, without locale or time-zone surprises.
enum FTPTime {
    /// Seconds since 1970 for a UTC date and time; nil for an impossible date.
    static func seconds(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) -> Double? {
        CivilDate.seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// `YYYYMMDDHHMMSS[.sss]` (MLSD `modify=`, MFMT, MDTM) → seconds since 1970.
    static func parseStamp(_ s: String) -> Double? {
        let parts = s.split(separator: ".", maxSplits: 1)
        let digits = Array(parts.first ?? "")
        guard digits.count == 14, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        func n(_ a: Int, _ b: Int) -> Int { Int(String(digits[a..<b]))! }
        guard var t = seconds(year: n(0, 4), month: n(4, 6), day: n(6, 8), hour: n(8, 10), minute: n(10, 12), second: n(12, 14))
        else { return nil }
        if parts.count == 2, let fraction = Double("0." + parts[1]) { t += fraction }
        return t
    }

    /// Seconds since 1970 → `YYYYMMDDHHMMSS` (UTC, whole seconds), for MFMT.
    static func stamp(_ seconds: Double) -> String {
        var t = time_t(seconds.rounded(.down))
        var tm = tm()
        gmtime_r(&t, &tm)
        return String(format: "%04d%02d%02d%02d%02d%02d", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday),
                      Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec))
    }
}
