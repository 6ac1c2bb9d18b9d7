import Foundation

/// RFC 3659 machine listings: MLSD lines (data connection) and the MLST fact line (control
/// connection). A line is `fact=value;fact=value; name`: the facts end at the first space and
/// everything after it is the name, which may itself contain spaces, `;`, `=` or anything else.
enum FTPMachineListing {
    /// Parses an MLSD body (lines separated by CRLF or LF). Lines that are not entries are skipped.
    static func parse(_ body: Data) -> [FTPEntry] {
        let text = String(decoding: body, as: UTF8.self)
        return FTPListing.lines(text).compactMap { parseLine($0) }
    }

    /// One `facts SP name` line; nil when it has no name.
    static func parseLine(_ line: String) -> FTPEntry? {
        guard let space = line.firstIndex(of: " ") else { return nil }
        let name = String(line[line.index(after: space)...])
        guard !name.isEmpty else { return nil }
        var entry = FTPEntry(name: name, kind: .file)
        var type: String?
        for fact in line[..<space].split(separator: ";", omittingEmptySubsequences: true) {
            guard let eq = fact.firstIndex(of: "=") else { continue }
            let key = fact[..<eq].lowercased()
            let value = String(fact[fact.index(after: eq)...])
            switch key {
            case "type": type = value
            case "size", "sizd": if key == "size" || entry.size == nil { entry.size = Int64(value) }
            case "modify":
                entry.modifiedStamp = value
                entry.modified = FTPTime.parseStamp(value)
            case "unique": entry.unique = value
            case "unix.mode":
                // "0644" or "644", octal; only the permission bits.
                if let mode = UInt16(value, radix: 8) { entry.permissions = mode & 0o7777 }
            default: break
            }
        }
        entry.kind = kind(type)
        return entry
    }

    /// `file`, `dir`, `cdir`, `pdir`, `OS.unix=slink[:target]` / `OS.unix=symlink[:target]`.
    /// Unknown types (devices, `OS.xyz=...`) are served as files.
    static func kind(_ type: String?) -> FTPEntry.Kind {
        guard let type else { return .file }
        let lower = type.lowercased()
        switch lower {
        case "dir": return .folder
        case "cdir", "pdir": return .selfOrParent
        case "file": return .file
        default: break
        }
        for prefix in ["os.unix=slink", "os.unix=symlink"] where lower.hasPrefix(prefix) {
            let rest = type.dropFirst(prefix.count)
            if rest.first == ":" {
                let target = String(rest.dropFirst())
                return .symlink(target: target.isEmpty ? nil : target)
            }
            return .symlink(target: nil)
        }
        return .file
    }

    /// The entry in an MLST reply's lines (`250-Listing ...`, ` facts path`, `250 End`): the one
    /// line that starts with a space. The name there is a path and not used.
    static func entry(inReply lines: [String]) -> FTPEntry? {
        guard let factLine = lines.first(where: { $0.hasPrefix(" ") }) else { return nil }
        return parseLine(String(factLine.dropFirst()))
    }
}
