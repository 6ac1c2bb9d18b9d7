import Curl
import FavFSCore
import Foundation

/// A folder's long listing, parsed into entries with exact names.
///
/// The name is what follows the date in each line, so names with spaces, tabs, unicode or "->"
/// come out whole. A symlink line is `name -> target`: split at the only " -> ". When a name or
/// target itself contains " -> ", the exact names are fetched too (CURLOPT_DIRLISTONLY, one more
/// request, only then) and the line is split after the name that matches.
enum SFTPListing {
    struct Entry: Sendable {
        var name: String
        var line: SFTPLongName
        var symlinkTarget: String?
    }

    static func fetch(_ folder: ItemIdentifier, provider: SFTPProvider) async throws -> [Entry] {
        let response = try await provider.perform(provider.paths.listingURL(folder), [], operation: "list", path: folder.rawValue)
        var lines: [SFTPLongName] = []
        var unreadable = 0
        for raw in response.body.split(separator: UInt8(ascii: "\n")) {
            let text = String(decoding: raw, as: UTF8.self)
            if let line = SFTPLongName.parse(Substring(text)) { lines.append(line) } else { unreadable += 1 }
        }
        if unreadable > 0 {
            // A name with a newline splits its line; other servers may write other formats.
            provider.log.warning("skipped unreadable lines of a listing", metadata: [
                "remote": "\(provider.remoteDescription)", "folder": "\(folder.rawValue)", "lines": "\(unreadable)",
            ])
        }
        var names: Set<String>?
        var entries: [Entry] = []
        entries.reserveCapacity(lines.count)
        for line in lines {
            var entry: Entry
            if line.kind == .symlink {
                if let split = line.unambiguousSymlink {
                    entry = Entry(name: split.name, line: line, symlinkTarget: split.target)
                } else {
                    if names == nil { names = try await exactNames(folder, provider: provider) }
                    guard let split = resolve(line.rest, names: names!) else { continue }
                    entry = Entry(name: split.name, line: line, symlinkTarget: split.target)
                }
            } else {
                entry = Entry(name: line.rest, line: line)
            }
            if entry.name == "." || entry.name == ".." || entry.name.hasPrefix(SFTPProvider.temporaryPrefix) { continue }
            entries.append(entry)
        }
        return entries
    }

    /// Splits `name -> target` using the folder's exact names: the longest name followed by
    /// " -> " wins. Nil when none matches (the entry went away between the two requests).
    static func resolve(_ rest: String, names: Set<String>) -> (name: String, target: String)? {
        var best: (name: String, targetStart: String.Index)?
        var search = rest.startIndex
        while let r = rest.range(of: " -> ", options: .literal, range: search..<rest.endIndex) {
            let candidate = String(rest[..<r.lowerBound])
            if names.contains(candidate) { best = (candidate, r.upperBound) }
            search = rest.index(after: r.lowerBound)
        }
        guard let best else { return nil }
        return (best.name, String(rest[best.targetStart...]))
    }

    /// The folder's names only, one per line.
    static func exactNames(_ folder: ItemIdentifier, provider: SFTPProvider) async throws -> Set<String> {
        let response = try await provider.perform(provider.paths.listingURL(folder), [.dirListOnly], operation: "list names", path: folder.rawValue)
        return Set(response.body.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) })
    }
}
