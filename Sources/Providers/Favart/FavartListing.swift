import FavFSCore
import Foundation
import Logging

/// One entry of a `GET /media` answer: `{"name": "...", "size": N}`.
struct FavartEntry: Decodable, Sendable, Equatable {
    var name: String
    var size: Int64
}

/// Which names the API can hold as what. The listing carries no kind: only `.jpg`, `.jpeg` and
/// `.png` files (lower case: the real server's filter is case-sensitive, so `photo.JPG` is stored
/// but never listed) and folders are listed, so a name ending in one of those is a file
/// and every other name is a folder. The corollaries are limits on writes: a file can only be
/// stored under an image name (anything else would never be listed), and a folder cannot have
/// one (it would be listed as a file).
enum FavartNames {
    static let imageExtensions = [".jpg", ".jpeg", ".png"]

    /// True for names the API lists as files (as the server decides it: the name ends in one
    /// of the extensions, case-sensitively — ".jpg" alone counts too).
    /// Compared on bytes, not Characters: "x.jpg" followed by a combining accent is one
    /// Character "ǵ" to Swift but ends in ".jpg" to the server.
    static func isImage(_ name: String) -> Bool {
        let tail = Array(name.utf8.suffix(5))
        return imageExtensions.contains { tail.reversed().starts(with: $0.utf8.reversed()) }
    }

    /// The MIME type sent with an upload.
    static func contentType(_ name: String) -> String {
        name.lowercased().hasSuffix(".png") ? "image/png" : "image/jpeg"
    }
}

/// The synthetic versions of Favart items. The API has no ETags and listings have no mtimes,
/// so a file's version is its size: `size:N`. Listings, `item(for:)` (a listing of the parent)
/// and uploads (the size sent) all produce exactly the same string. Precision: an edit that
/// keeps the size is not a new version; reads narrow that gap with `FavartReadPins`.
enum FavartVersion {
    static func make(size: Int64) -> String { "size:\(size)" }

    /// The size a version stands for; nil for a version this provider did not make.
    static func size(of version: String) -> Int64? {
        guard version.hasPrefix("size:") else { return nil }
        return Int64(version.dropFirst(5))
    }
}

/// `GET /media` JSON → items.
enum FavartListing {
    enum ParseError: Error, CustomStringConvertible {
        case notJSON(String)
        var description: String {
            switch self { case .notJSON(let why): return "not a JSON array of {name, size}: \(why)" }
        }
    }

    /// Decodes the body of a `GET /media` answer.
    static func parse(_ body: Data) throws -> [FavartEntry] {
        do {
            return try JSONDecoder().decode([FavartEntry].self, from: body)
        } catch let DecodingError.dataCorrupted(context) {
            throw ParseError.notJSON(context.debugDescription)
        } catch let DecodingError.keyNotFound(key, _) {
            throw ParseError.notJSON("an entry has no \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(type, context) {
            let at = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw ParseError.notJSON("expected \(type) at \(at.isEmpty ? "top level" : at)")
        } catch {
            throw ParseError.notJSON("\(error)")
        }
    }

    /// The item an entry of `folder`'s listing stands for. Folders have size 0 (the listed
    /// size is the server's inode size) and no version; files have the size version.
    static func item(_ entry: FavartEntry, in folder: ItemIdentifier) -> Item {
        let id = folder.child(entry.name)
        if FavartNames.isImage(entry.name) {
            return Item(identifier: id, kind: .file, size: entry.size, modified: nil,
                        version: FavartVersion.make(size: entry.size))
        }
        return Item(identifier: id, kind: .folder, size: 0, modified: nil, version: nil)
    }

    /// A page of every entry with a name that can be served; the rest are skipped with a warning.
    static func page(_ entries: [FavartEntry], folder: ItemIdentifier, remote: String, log: Logger) -> EnumerationPage {
        var items: [Item] = []
        var skipped: [(name: String, problem: ItemNameProblem)] = []
        items.reserveCapacity(entries.count)
        for entry in entries {
            if let problem = ItemIdentifier.validate(name: entry.name) {
                log.warning("skipping an entry the remote listed", metadata: [
                    "remote": "\(remote)", "folder": "\(folder.rawValue)", "name": "\(entry.name)", "problem": "\(problem.rawValue)",
                ])
                skipped.append((entry.name, problem))
                continue
            }
            items.append(item(entry, in: folder))
        }
        return EnumerationPage(items: items, nextPage: nil, skipped: skipped)
    }
}

/// The `Last-Modified` each file version was first read with, so that later reads of the same
/// version notice a change that kept the size (which the size version cannot see) and answer
/// `.versionChanged` rather than mix old and new bytes in one cached file.
///
/// In memory only, per provider: after a restart the first read pins afresh, so an edit that
/// kept the size while favfs was not running is not detected.
final class FavartReadPins: @unchecked Sendable {
    private let lock = NSLock()
    /// Path → the version last read and its Last-Modified.
    private var pins: [String: (version: String, lastModified: String)] = [:]
    /// A bound on memory; past it the pins start over (weaker detection, never wrong answers).
    private let limit = 100_000

    /// Records `lastModified` for `path` at `version` unless one is recorded for that version;
    /// false when a different one is (the file changed). The new value replaces the old, so the
    /// reread after the `.versionChanged` is consistent again.
    func check(path: String, version: String, lastModified: String) -> Bool {
        lock.withLock {
            if let pin = pins[path], pin.version == version {
                if pin.lastModified == lastModified { return true }
                pins[path] = (version, lastModified)
                return false
            }
            if pins.count >= limit { pins.removeAll() }
            pins[path] = (version, lastModified)
            return true
        }
    }

    /// Drops the pin of `path` (after this provider wrote or deleted it).
    func forget(path: String) {
        lock.withLock { pins[path] = nil }
    }
}
