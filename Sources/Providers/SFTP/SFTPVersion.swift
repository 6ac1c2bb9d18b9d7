/// The synthetic version of an SFTP file: its size and modification time in whole seconds, as
/// the server's stat reports them (SFTP v3 has no finer mtime and no content hash). Listing,
/// item(for:), uploads and moves all take it from the same kind of stat, so a version is the
/// same string whichever call produced it. Two writes within one second that keep the size look
/// alike: that is the limit of conflict detection on SFTP.
struct SFTPVersion: Equatable, Sendable {
    var size: Int64
    var mtime: Int64

    var string: String { "s\(size)-t\(mtime)" }

    /// Parses `s<size>-t<mtime>`; nil for anything else (a version from another provider).
    init?(_ string: String) {
        guard string.hasPrefix("s"), let dash = string.range(of: "-t"),
              let size = Int64(string[string.index(after: string.startIndex)..<dash.lowerBound]),
              let mtime = Int64(string[dash.upperBound...]) else { return nil }
        self.size = size
        self.mtime = mtime
    }

    init(size: Int64, mtime: Int64) {
        self.size = size
        self.mtime = mtime
    }
}
