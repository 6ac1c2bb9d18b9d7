import Foundation

/// A read's version check on a server without MLST, in the read's own connection: `SIZE` and
/// `MDTM` of the file sent before RETR (and after it, when the read runs to the end), instead
/// of a LIST of the whole folder before each read (a data connection, and the folder's every
/// entry, per file read).
///
/// The version of a file listed by LIST is its size and LIST's time stamp (to the minute, or
/// the day for old files); MDTM answers to the second, so it is cut to the stamp's length.
/// Where the facts do not agree (a file that changed, or a server whose LIST shows local time
/// while MDTM shows UTC) the reader asks LIST, which decides as before.
struct FTPSizeAndTime: Sendable, Equatable {
    let size: Int64
    /// `YYYYMMDDHHMM` or `YYYYMMDD`, as FTPListing normalized LIST's time.
    let stamp: String

    /// The facts of a LIST version (`size-stamp`); nil for any other form (MLSD's, a LIST line
    /// without a time).
    init?(version: String) {
        let parts = version.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let size = Int64(parts[0]), [8, 12].contains(parts[1].count),
              parts[1].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        self.size = size
        self.stamp = String(parts[1])
    }

    /// The commands for QUOTE/POSTQUOTE (`*`: a refusal is an answer that disagrees, not a
    /// failed transfer).
    static func commands(_ serverPath: String) -> [String] { ["*SIZE \(serverPath)", "*MDTM \(serverPath)"] }

    /// Whether every SIZE and MDTM reply among a transfer's control lines shows these facts,
    /// and each was answered at least `times` times (before the transfer, and after it).
    /// libcurl's own `SIZE` before RETR answers too, and must agree as well. A refusal (5xx:
    /// no such file) is not counted, so it leaves the check short.
    func agrees(with replyLines: [String], times: Int) -> Bool {
        var sizes = 0, stamps = 0
        for reply in FTPReply.group(replyLines) {
            guard reply.code == 213, let value = reply.lines.last?.dropFirst(4).trimmingCharacters(in: .whitespaces) else { continue }
            let digits = value.split(separator: ".").first.map(String.init) ?? value
            if digits.count == 14, FTPTime.parseStamp(value) != nil {
                guard digits.prefix(stamp.count) == stamp else { return false }
                stamps += 1
            } else if let n = Int64(value) {
                guard n == size else { return false }
                sizes += 1
            }
        }
        return sizes >= times && stamps >= times
    }
}
