import FavFSCore
import Foundation

/// Dropbox's `Metadata` union (`{".tag": "file" | "folder" | "deleted", "name", ...}`) → items,
/// and identifiers → Dropbox paths.
enum DropboxMetadata {
    /// The item an entry stands for, named `id`; nil for a `deleted` entry (listings with
    /// `include_deleted`, never asked for) or an entry without a known tag.
    /// Files: size, `server_modified` (to the second) and `rev` as the version. Folders: no version.
    static func item(_ entry: [String: Any], id: ItemIdentifier) -> Item? {
        switch entry[".tag"] as? String {
        case "folder":
            return Item(identifier: id, kind: .folder)
        case "file":
            guard let rev = entry["rev"] as? String, !rev.isEmpty,
                  let size = (entry["size"] as? NSNumber)?.int64Value, size >= 0 else { return nil }
            let modified = (entry["server_modified"] as? String).flatMap(timestamp)
            return Item(identifier: id, kind: .file, size: size, modified: modified, version: rev)
        default:
            return nil
        }
    }

    /// The entry's name (the last component, as Dropbox keeps its case).
    static func name(_ entry: [String: Any]) -> String? {
        if let name = entry["name"] as? String, !name.isEmpty { return name }
        return (entry["path_display"] as? String)?.split(separator: "/").last.map(String.init)
    }

    /// `2015-05-12T15:50:38Z` → seconds since 1970; nil for anything else.
    static func timestamp(_ text: String) -> Double? {
        let u = Array(text.utf8)
        guard u.count >= 20, u[4] == UInt8(ascii: "-"), u[7] == UInt8(ascii: "-"), u[10] == UInt8(ascii: "T"),
              u[13] == UInt8(ascii: ":"), u[16] == UInt8(ascii: ":"), u.last == UInt8(ascii: "Z") else { return nil }
        func number(_ r: Range<Int>) -> Int? { Int(String(decoding: u[r], as: UTF8.self)) }
        guard let y = number(0..<4), let mo = number(5..<7), let d = number(8..<10),
              let h = number(11..<13), let mi = number(14..<16), let s = number(17..<19) else { return nil }
        return CivilDate.seconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
    }
}

/// The remote's root folder in the Dropbox (from the URL's path) and the Dropbox path of each
/// identifier below it. Dropbox spells its own root "" and every other path "/a/b", never with
/// a trailing slash.
struct DropboxPaths: Sendable {
    /// "" for the whole Dropbox, else "/Folder/Sub".
    let root: String

    init(urlPath: String) {
        let parts = urlPath.split(separator: "/", omittingEmptySubsequences: true)
        root = parts.isEmpty ? "" : "/" + parts.joined(separator: "/")
    }

    func path(_ id: ItemIdentifier) -> String {
        id.isRoot ? root : root + id.rawValue
    }

    /// The identifier of a Dropbox path (`path_display` of a change), nil when it is not at or
    /// below the root. The root is compared without case, as Dropbox compares paths.
    func identifier(of dropboxPath: String) -> ItemIdentifier? {
        guard dropboxPath.hasPrefix("/") || dropboxPath.isEmpty else { return nil }
        if root.isEmpty { return dropboxPath.isEmpty ? .rootContainer : ItemIdentifier(dropboxPath) }
        let lower = dropboxPath.lowercased(), rootLower = root.lowercased()
        if lower == rootLower { return .rootContainer }
        guard lower.hasPrefix(rootLower + "/") else { return nil }
        return ItemIdentifier(String(dropboxPath.dropFirst(root.count)))
    }
}
