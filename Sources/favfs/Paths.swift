import Foundation

/// Where favfs keeps things on this machine.
enum Paths {
    /// `$XDG_CACHE_HOME/favfs/<remote>` (default `~/.cache/favfs/<remote>`): placeholders,
    /// content and the daemon's log of one remote.
    static func defaultCacheDir(slug: String) -> String {
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() as NSString).appendingPathComponent(".cache")
        return ((base as NSString).appendingPathComponent("favfs") as NSString).appendingPathComponent(slug)
    }

    /// Takes group and other access away from a folder and everything in it (a cache dir made
    /// by a version that left it 0755, its database 0644).
    static func makePrivate(_ dir: String) {
        chmod(dir, 0o700)
        guard let walker = FileManager.default.enumerator(atPath: dir) else { return }
        for case let rel as String in walker {
            let path = (dir as NSString).appendingPathComponent(rel)
            var st = stat()
            guard lstat(path, &st) == 0, st.st_mode & 0o077 != 0, st.st_mode & S_IFMT != S_IFLNK else { continue }
            chmod(path, mode_t(st.st_mode & 0o700))
        }
    }

    /// A folder only this user can use, for control sockets: `$XDG_RUNTIME_DIR/favfs`, else
    /// `/tmp/favfs-UID`. Nil when it is not this user's own 0700 folder (someone made it first).
    static func runtimeDir() -> String? {
        let env = ProcessInfo.processInfo.environment
        let dir: String
        if let xdg = env["XDG_RUNTIME_DIR"], !xdg.isEmpty, FileManager.default.fileExists(atPath: xdg) {
            dir = (xdg as NSString).appendingPathComponent("favfs")
        } else {
            dir = "/tmp/favfs-\(getuid())"
        }
        if mkdir(dir, 0o700) != 0 && errno != EEXIST { return nil }
        var st = stat()
        guard lstat(dir, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, st.st_uid == getuid(), st.st_mode & 0o077 == 0 else { return nil }
        return dir
    }

    /// The absolute, symlink-resolved path, or nil if it does not exist.
    static func real(_ path: String) -> String? {
        let expanded = (path as NSString).expandingTildeInPath
        guard let r = realpath(expanded, nil) else { return nil }
        defer { free(r) }
        return String(cString: r)
    }

    /// Mount points in this mount namespace with their filesystem type (from /proc/self/mountinfo).
    static func mounts() -> [(mountpoint: String, fstype: String, source: String)] {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", omittingEmptySubsequences: false)
            guard let dash = parts.firstIndex(of: "-"), parts.count > dash + 2, parts.count > 4 else { return nil }
            return (unescape(String(parts[4])), String(parts[dash + 1]), unescape(String(parts[dash + 2])))
        }
    }

    /// mountinfo escapes space, tab, newline and backslash as \ooo.
    static func unescape(_ s: String) -> String {
        var out = [UInt8](), bytes = Array(s.utf8), i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "\\"), i + 4 <= bytes.count,
               let v = UInt8(String(decoding: bytes[(i + 1)..<(i + 4)], as: UTF8.self), radix: 8) {
                out.append(v); i += 4
            } else { out.append(bytes[i]); i += 1 }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isMountpoint(_ path: String) -> (mounted: Bool, fstype: String?) {
        if let m = mounts().last(where: { $0.mountpoint == path }) { return (true, m.fstype) }
        return (false, nil)
    }
}
