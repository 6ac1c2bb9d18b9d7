import FavFSCore

/// A modification time set through a mount (`utimensat`: `rsync -a`, `cp -p`, `tar x`), kept at
/// a WebDAV server as a dead property, since `getlastmodified` is the server's own and cannot
/// be set. The value is `SECONDS.NANOSECONDS VERSION`: the version (ETag) the file had when the
/// time was set. A listing shows the time only while the file is still that version, so a
/// later PUT by any client, which keeps dead properties on most servers, brings the server's
/// time back instead of showing an old one for new content.
struct WebDAVModifiedTime: Equatable {
    /// favfs's property namespace and the property's local name (static strings: the
    /// multistatus reader compares them as C strings).
    static let namespace: StaticString = "urn:x-favfs:"
    static let property: StaticString = "mtime"

    var time: Timestamp
    var version: String

    init(time: Timestamp, version: String) {
        self.time = time
        self.version = version
    }

    /// Nil for a value favfs did not write (or a damaged one): it is then ignored.
    init?(property value: String) {
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let number = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        guard number.count == 2, number[1].count == 9, let seconds = Int64(number[0]), let ns = Int32(number[1]),
              ns >= 0, abs(seconds) <= 253_402_300_799 else { return nil }
        time = Timestamp(seconds: seconds, nanoseconds: ns)
        version = String(parts[1])
    }

    /// The property's text (`Timestamp.description` is `SECONDS.NANOSECONDS`, nine digits).
    var propertyValue: String { "\(time) \(version)" }
}
