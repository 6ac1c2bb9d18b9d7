import Foundation
import FavFSCore

/// A remote's URL in the gvfs convention (`dav://user@host:port/path`, `s3://bucket/prefix`,
/// `sftp://user@host/path`, `file:///path`, ...), parsed. Query items are provider options
/// (`s3://bucket?region=eu-west-1`), for one-off mounts.
public struct RemoteURL: Sendable, Equatable, CustomStringConvertible {
    /// Which provider speaks this URL.
    public enum Kind: String, Sendable, CaseIterable {
        case webdav, local, s3, sftp, ftp, httpIndex, favart, smb, dropbox, onedrive
    }

    /// Every scheme favfs knows, and its provider.
    public static let schemes: [String: Kind] = [
        "dav": .webdav, "davs": .webdav, "file": .local, "s3": .s3, "sftp": .sftp,
        "ftp": .ftp, "ftps": .ftp, "http": .httpIndex, "https": .httpIndex,
        "favart": .favart, "favarts": .favart, "smb": .smb, "dropbox": .dropbox, "onedrive": .onedrive,
    ]

    public let kind: Kind
    public let scheme: String
    public let user: String?
    public let password: String?
    /// The host (for `s3://`, the bucket).
    public let host: String
    public let port: Int?
    /// The path, percent-decoded, always starting with "/" (for `s3://`, the key prefix).
    public let path: String
    /// Options from the URL's query (`?region=eu-west-1&endpoint=http://127.0.0.1:9000`).
    public let options: [String: String]

    public struct ParseError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(_ string: String) throws {
        guard let comps = URLComponents(string: string), let scheme = comps.scheme?.lowercased() else {
            throw ParseError(description: "'\(string)' is not a URL (e.g. dav://host/path, s3://bucket/prefix, sftp://user@host/path, file:///path)")
        }
        self.scheme = scheme
        guard let kind = Self.schemes[scheme] else {
            let known = Self.schemes.keys.sorted().map { "\($0)://" }.joined(separator: ", ")
            throw ParseError(description: "unsupported remote scheme '\(scheme)://' (supported: \(known))")
        }
        self.kind = kind
        user = comps.user
        password = comps.password
        host = comps.host ?? ""
        port = comps.port
        let p = comps.path.isEmpty ? "/" : comps.path
        path = p.hasPrefix("/") ? p : "/" + p
        var options: [String: String] = [:]
        for item in comps.queryItems ?? [] {
            guard !item.name.isEmpty else { continue }
            options[item.name] = item.value ?? "true"
        }
        self.options = options
        if kind == .local {
            if !host.isEmpty && host != "localhost" {
                throw ParseError(description: "file:// remotes are local folders: use file:///absolute/path")
            }
        } else if kind == .dropbox {
            // One Dropbox per refresh token: the account is not named in the URL.
            if !host.isEmpty {
                throw ParseError(description: "dropbox:// remotes name no host: use dropbox:///folder (three slashes), the account is the refresh token's")
            }
        } else if kind == .onedrive {
            // The signed-in user's drive: the account is the refresh token's.
            if !host.isEmpty {
                throw ParseError(description: "onedrive:// remotes name no host: use onedrive:///folder (three slashes), the drive is the refresh token's user's")
            }
        } else if host.isEmpty {
            throw ParseError(description: kind == .s3 ? "'\(string)' has no bucket (s3://BUCKET/prefix)" : "'\(string)' has no host")
        }
    }

    /// The URL without credentials and options, for messages, logs and the mount table.
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
