import FavFSCore
import Foundation

/// Graph's `driveItem` resource → items.
enum OneDriveItems {
    /// The item a driveItem stands for, named `id`; nil for one that is neither a file nor a
    /// folder (a OneNote `package`, a `remoteItem` shared from another drive) or is `deleted`.
    /// Folders (and the root): no version. Files: size, the time `fileSystemInfo` keeps (the one
    /// a client sets; else `lastModifiedDateTime`) and the `cTag` as the version, which changes
    /// with the content only (the `eTag` also changes on a rename or a new time), falling back
    /// to the `eTag`.
    static func item(_ object: [String: Any], id: ItemIdentifier) -> Item? {
        if object["deleted"] != nil { return nil }
        let modified = modifiedTime(object)
        if object["folder"] != nil || object["root"] != nil {
            return Item(identifier: id, kind: .folder, modifiedTime: modified)
        }
        guard object["file"] != nil,
              let size = (object["size"] as? NSNumber)?.int64Value, size >= 0,
              let version = (object["cTag"] as? String) ?? (object["eTag"] as? String), !version.isEmpty else { return nil }
        return Item(identifier: id, kind: .file, size: size, modifiedTime: modified, version: version)
    }

    /// `fileSystemInfo.lastModifiedDateTime`, else `lastModifiedDateTime`.
    static func modifiedTime(_ object: [String: Any]) -> Timestamp? {
        let fs = (object["fileSystemInfo"] as? [String: Any])?["lastModifiedDateTime"] as? String
        return (fs ?? (object["lastModifiedDateTime"] as? String)).flatMap(timestamp)
    }

    /// `2017-01-01T12:30:05Z` or with a fraction (`…05.1234567Z`) → a timestamp; nil otherwise.
    static func timestamp(_ text: String) -> Timestamp? {
        let u = Array(text.utf8)
        guard u.count >= 20, u[4] == UInt8(ascii: "-"), u[7] == UInt8(ascii: "-"), u[10] == UInt8(ascii: "T"),
              u[13] == UInt8(ascii: ":"), u[16] == UInt8(ascii: ":"), u.last == UInt8(ascii: "Z") else { return nil }
        func number(_ r: Range<Int>) -> Int? { Int(String(decoding: u[r], as: UTF8.self)) }
        guard let y = number(0..<4), let mo = number(5..<7), let d = number(8..<10),
              let h = number(11..<13), let mi = number(14..<16), let s = number(17..<19),
              let seconds = CivilDate.seconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s) else { return nil }
        var nanoseconds: Int32 = 0
        if u[19] == UInt8(ascii: ".") {
            let digits = u[20..<(u.count - 1)]
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            var ns = 0
            for (i, digit) in digits.prefix(9).enumerated() { ns += Int(digit - 48) * Int(pow(10.0, Double(8 - i))) }
            nanoseconds = Int32(ns)
        } else if u.count != 20 {
            return nil
        }
        return Timestamp(seconds: Int64(seconds), nanoseconds: nanoseconds)
    }

    /// A timestamp as Graph takes it: `2017-01-01T12:30:05Z` (OneDrive keeps whole seconds).
    static func text(_ time: Timestamp) -> String {
        var t = time_t(time.seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                      Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}

/// The remote's root folder in the drive (from the URL's path) and Graph's address of each
/// identifier below it: `/me/drive/root` for the drive's root, `/me/drive/root:/a/b:` for a
/// path (each component percent-encoded).
struct OneDrivePaths: Sendable {
    /// "" for the whole drive, else "/Folder/Sub".
    let root: String

    init(urlPath: String) {
        let parts = urlPath.split(separator: "/", omittingEmptySubsequences: true)
        root = parts.isEmpty ? "" : "/" + parts.joined(separator: "/")
    }

    /// The path in the drive: "" for the drive's root, else "/a/b".
    func drivePath(_ id: ItemIdentifier) -> String {
        id.isRoot ? root : root + id.rawValue
    }

    /// The identifier of a path in the drive, nil when it is not below the remote's root.
    func identifier(drivePath: String) -> ItemIdentifier? {
        if drivePath == root { return .rootContainer }
        guard drivePath.hasPrefix(root + "/") else { return nil }
        return ItemIdentifier(String(drivePath.dropFirst(root.count)))
    }

    /// The item's URL under `graph`, with `suffix` (`children`, `content`, ...) after it.
    func url(_ graph: String, _ id: ItemIdentifier, _ suffix: String? = nil) -> String {
        url(graph, drivePath: drivePath(id), suffix)
    }

    func url(_ graph: String, drivePath: String, _ suffix: String? = nil) -> String {
        let tail = suffix.map { "/" + $0 } ?? ""
        if drivePath.isEmpty { return graph + "/me/drive/root" + tail }
        return graph + "/me/drive/root:" + PercentEncoding.strict(drivePath, keepSlash: true) + ":" + tail
    }
}
