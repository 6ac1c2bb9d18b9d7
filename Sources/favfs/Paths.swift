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

    /// The folder for this user's control sockets: `/run/user/UID/favfs` when the system gives
    /// the user `/run/user/UID`, else `/tmp/favfs-UID`. It depends on the uid alone, not on
    /// `XDG_RUNTIME_DIR`, so `favfs status`/`unmount` find the daemon from any session, under
    /// sudo or su (they read the mount's owner from mountinfo). Nil when it is not this user's
    /// own 0700 folder (someone made it first).
    static func runtimeDir() -> String? {
        let dir = controlDirectories(uid: getuid()).first { dir in
            // /run/user/UID is made by logind for a session; without one, /tmp.
            var st = stat()
            let parent = (dir as NSString).deletingLastPathComponent
            return lstat(parent, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR && (parent == "/tmp" || st.st_uid == getuid())
        } ?? "/tmp/favfs-\(getuid())"
        if mkdir(dir, 0o700) != 0 && errno != EEXIST { return nil }
        var st = stat()
        guard lstat(dir, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, st.st_uid == getuid(), st.st_mode & 0o077 == 0 else { return nil }
        return dir
    }

    /// Where a daemon of `uid` may listen, in the order it chooses; then `$XDG_RUNTIME_DIR/favfs`
    /// when `includeEnvironment` (where versions before this one listened).
    static func controlDirectories(uid: uid_t, includeEnvironment: Bool = false) -> [String] {
        var dirs = ["/run/user/\(uid)/favfs", "/tmp/favfs-\(uid)"]
        if includeEnvironment, let xdg = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !xdg.isEmpty {
            let legacy = (xdg as NSString).appendingPathComponent("favfs")
            if !dirs.contains(legacy) { dirs.append(legacy) }
        }
        return dirs
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
        mountEntries().map { ($0.mountpoint, $0.fstype, $0.source) }
    }

    /// mountinfo's lines: mount point, type, source and the super block's options (a FUSE
    /// mount's carry `user_id=UID`, the uid of the process that mounted it).
    static func mountEntries() -> [(mountpoint: String, fstype: String, source: String, superOptions: [String])] {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", omittingEmptySubsequences: false)
            guard let dash = parts.firstIndex(of: "-"), parts.count > dash + 2, parts.count > 4 else { return nil }
            let options = parts.count > dash + 3 ? parts[dash + 3].split(separator: ",").map(String.init) : []
            return (unescape(String(parts[4])), String(parts[dash + 1]), unescape(String(parts[dash + 2])), options)
        }
    }

    /// The uid that mounted the FUSE file system on `path` (its `user_id=`), if one is there.
    static func fuseOwner(of path: String) -> uid_t? {
        guard let entry = mountEntries().last(where: { $0.mountpoint == path }), entry.fstype.hasPrefix("fuse") else { return nil }
        return entry.superOptions.first { $0.hasPrefix("user_id=") }.flatMap { uid_t($0.dropFirst("user_id=".count)) }
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
