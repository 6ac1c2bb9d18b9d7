import Foundation
import FavFSCore

/// A remote's URL in the gvfs convention (`dav://user@host:port/path`, `file:///path`), parsed.
public struct RemoteURL: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable { case webdav, local }

    public let kind: Kind
    public let scheme: String
    public let user: String?
    public let password: String?
    public let host: String
    public let port: Int?
    /// The path, percent-decoded, always starting with "/".
    public let path: String

    public struct ParseError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(_ string: String) throws {
        guard let comps = URLComponents(string: string), let scheme = comps.scheme?.lowercased() else {
            throw ParseError(description: "'\(string)' is not a URL (expected dav://host/path, davs://host/path or file:///path)")
        }
        self.scheme = scheme
        switch scheme {
        case "dav", "davs": kind = .webdav
        case "file": kind = .local
        default:
            throw ParseError(description: "unsupported remote scheme '\(scheme)://' (supported: dav://, davs://, file://)")
        }
        user = comps.user
        password = comps.password
        host = comps.host ?? ""
        port = comps.port
        let p = comps.path.isEmpty ? "/" : comps.path
        path = p.hasPrefix("/") ? p : "/" + p
        if kind == .webdav && host.isEmpty { throw ParseError(description: "'\(string)' has no host") }
        if kind == .local && !host.isEmpty && host != "localhost" {
            throw ParseError(description: "file:// remotes are local folders: use file:///absolute/path")
        }
    }

    /// The URL without credentials, for messages, logs and the mount table.
    public var description: String {
        var s = "\(scheme)://"
        if let user { s += "\(user)@" }
        s += host
        if let port { s += ":\(port)" }
        return s + (path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path)
    }

    /// A short file-name-safe name for this remote (the default cache dir's name).
    public var slug: String {
        var raw = "\(scheme)-\(user.map { $0 + "@" } ?? "")\(host)\(port.map { "-\($0)" } ?? "")\(path)"
        raw = String(raw.map { $0.isLetter || $0.isNumber || "-_.@".contains($0) ? $0 : "_" })
        // FNV-1a keeps distinct remotes with similar slugs apart.
        var h: UInt64 = 0xcbf29ce484222325
        for b in description.utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        return String(raw.prefix(80)) + "-" + String(h, radix: 16).prefix(8)
    }
}
