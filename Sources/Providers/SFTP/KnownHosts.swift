import Foundation

/// The entries of an OpenSSH known_hosts file that name one host, the way `ssh` matches them:
/// plain names and `[host]:port`, comma-separated patterns with `*`, `?` and `!` negation, and
/// hashed names (`|1|salt|hash`, HMAC-SHA1). Marker lines (`@cert-authority`, `@revoked`) are
/// not host keys and are passed over.
///
/// Why favfs reads the file itself: libcurl 7.88 forces libssh2 to negotiate the key type of
/// the *first* entry it finds for the host, and for an `ssh-rsa` entry (what `ssh-keyscan`
/// writes first) that is the SHA-1 `ssh-rsa` algorithm, which OpenSSH 8.8+ refuses ("Unable to
/// exchange encryption keys"). libcurl is instead given only this host's entries, under their
/// plain name, strongest key types first; libssh2 still checks the server's key against all of them.
struct KnownHosts: Equatable {
    struct Entry: Equatable {
        var keyType: String
        var key: String
    }

    /// The host's entries in the file's order.
    var entries: [Entry]

    /// The name known_hosts uses for `host` on `port`: `host` on 22, else `[host]:port`.
    static func name(host: String, port: Int) -> String { port == 22 ? host : "[\(host)]:\(port)" }

    /// The entries of `text` that match `host` on `port`.
    init(text: String, host: String, port: Int) {
        let name = Self.name(host: host, port: port)
        var found: [Entry] = []
        for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let fields = raw.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 3, !fields[0].hasPrefix("#"), !fields[0].hasPrefix("@") else { continue }
            guard Self.matches(patterns: String(fields[0]), name: name) else { continue }
            found.append(Entry(keyType: String(fields[1]), key: String(fields[2])))
        }
        entries = found
    }

    /// Whether the entries hold no key type but `ssh-rsa` (libssh2 1.10 can then only ask for
    /// the SHA-1 algorithm, which OpenSSH 8.8+ refuses).
    var onlyRSA: Bool { !entries.isEmpty && entries.allSatisfy { $0.keyType == "ssh-rsa" } }

    /// A known_hosts text with these entries under `name`, strongest key types first.
    func rendered(host: String, port: Int) -> String {
        let name = Self.name(host: host, port: port)
        func rank(_ type: String) -> Int {
            if type == "ssh-ed25519" { return 0 }
            if type.hasPrefix("ecdsa-") { return 1 }
            if type == "ssh-rsa" { return 3 }
            return 2
        }
        let ordered = entries.enumerated().sorted { (rank($0.element.keyType), $0.offset) < (rank($1.element.keyType), $1.offset) }
        return ordered.map { "\(name) \($0.element.keyType) \($0.element.key)\n" }.joined()
    }

    /// ssh's matching of a host field: any positive pattern matches and no negated one does.
    static func matches(patterns field: String, name: String) -> Bool {
        if field.hasPrefix("|1|") { return hashedMatches(field, name: name) }
        var matched = false
        for pattern in field.split(separator: ",") {
            if pattern.hasPrefix("!") {
                if wildcard(Array(pattern.dropFirst().lowercased().utf8), Array(name.lowercased().utf8)) { return false }
            } else if wildcard(Array(pattern.lowercased().utf8), Array(name.lowercased().utf8)) {
                matched = true
            }
        }
        return matched
    }

    /// `|1|base64(salt)|base64(HMAC-SHA1(salt, name))`.
    static func hashedMatches(_ field: String, name: String) -> Bool {
        let parts = field.split(separator: "|", omittingEmptySubsequences: false)
        guard parts.count == 4, let salt = Data(base64Encoded: String(parts[2])),
              let hash = Data(base64Encoded: String(parts[3])) else { return false }
        return HMACSHA1.mac(key: Array(salt), message: Array(name.utf8)) == Array(hash)
    }

    /// `*` any run, `?` any one byte.
    static func wildcard(_ p: [UInt8], _ s: [UInt8]) -> Bool {
        var pi = 0, si = 0, star = -1, mark = 0
        while si < s.count {
            if pi < p.count && (p[pi] == UInt8(ascii: "?") || p[pi] == s[si]) { pi += 1; si += 1 }
            else if pi < p.count && p[pi] == UInt8(ascii: "*") { star = pi; mark = si; pi += 1 }
            else if star >= 0 { pi = star + 1; mark += 1; si = mark }
            else { return false }
        }
        while pi < p.count && p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.count
    }
}

/// The known_hosts file libcurl is given for one host: rewritten from the user's file (see
/// `KnownHosts`) into a private temporary file, again whenever the user's file changes.
final class KnownHostsFile: @unchecked Sendable {
    let source: String
    let host: String
    let port: Int
    private let lock = NSLock()
    private var stamp: (mtime: timespec, size: off_t)?
    private var current: (path: String, onlyRSA: Bool)?

    init(source: String, host: String, port: Int) {
        self.source = source; self.host = host; self.port = port
    }

    deinit { if let path = current?.path { unlink(path) } }

    /// The file to hand to libcurl; the user's own file when it cannot be read (libcurl's error
    /// then names what is wrong with it).
    var path: String { lock.withLock { refresh()?.path ?? source } }

    /// Whether the user's file knows only `ssh-rsa` keys for the host.
    var onlyRSA: Bool { lock.withLock { refresh()?.onlyRSA ?? false } }

    private func refresh() -> (path: String, onlyRSA: Bool)? {
        var st = stat()
        guard fstatat(AT_FDCWD, source, &st, 0) == 0 else { return nil }
        if let stamp, let current, stamp.mtime.tv_sec == st.st_mtim.tv_sec, stamp.mtime.tv_nsec == st.st_mtim.tv_nsec,
           stamp.size == st.st_size { return current }
        guard let text = try? String(contentsOfFile: source, encoding: .utf8) else { return nil }
        let known = KnownHosts(text: text, host: host, port: port)
        let path = current?.path ?? NSTemporaryDirectory() + "favfs-known_hosts-\(getpid())-\(UUID().uuidString.prefix(8))"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        let bytes = Array(known.rendered(host: host, port: port).utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { return nil }
        stamp = (st.st_mtim, st.st_size)
        current = (path, known.onlyRSA)
        return current
    }
}
