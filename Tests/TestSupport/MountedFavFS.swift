import Foundation

/// Runs a program with a time limit; stdout/stderr go to temp files (not pipes), so a daemon that
/// inherits them cannot block the caller.
public enum TimedProcess {
    public struct Result: Sendable, CustomStringConvertible {
        public let status: Int32
        public let stdout: String
        public let stderr: String
        public let elapsed: Double
        public let timedOut: Bool
        public var succeeded: Bool { status == 0 && !timedOut }
        public var description: String {
            "status \(status)\(timedOut ? " (TIMED OUT)" : "") after \(String(format: "%.1f", elapsed)) s\n"
                + "stdout: \(stdout.prefix(2000))\nstderr: \(stderr.prefix(2000))"
        }
    }

    /// posix_spawn + waitpid (Foundation's Process on Linux can miss the exit of a child that daemonized).
    /// `environment`: changes to this process's environment for the child (a nil value removes the variable).
    public static func run(_ path: String, _ args: [String], stdin: String? = nil, timeout: Double = 120,
                           environment: [String: String?] = [:]) throws -> Result {
        let tmp = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("favfs-proc-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        let outPath = tmp.appendingPathComponent("out").path, errPath = tmp.appendingPathComponent("err").path

        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw ShellError("pipe failed: errno \(errno)") }
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Only 0-2: tests run in parallel, and a descriptor of another test's mount inherited
        // here would keep that mount busy.
        Descriptors.closeInChild(&actions, from: 3)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        // Default signal handling in the child (the test runner may ignore SIGPIPE).
        var dflt = sigset_t()
        sigemptyset(&dflt)
        sigaddset(&dflt, SIGPIPE)
        posix_spawnattr_setsigdefault(&attr, &dflt)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.isEmpty ? [] : env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for e in envp { free(e) } }
        var pid: pid_t = 0
        let start = Date()
        let rc = envp.isEmpty ? posix_spawn(&pid, path, &actions, &attr, argv, environ)
            : posix_spawn(&pid, path, &actions, &attr, argv, envp)
        close(fds[0])
        guard rc == 0 else { close(fds[1]); throw ShellError("posix_spawn \(path): \(String(cString: strerror(rc)))") }
        if let stdin {
            let bytes = Array(stdin.utf8)
            _ = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        }
        close(fds[1])

        var status: Int32 = 0
        var timedOut = false
        var exited = false
        let deadline = start.addingTimeInterval(timeout)
        var killAt: Date?
        while !exited {
            let w = waitpid(pid, &status, WNOHANG)
            if w == pid { exited = true; break }
            if w < 0 && errno != EINTR { break }
            if killAt == nil && Date() >= deadline {
                timedOut = true
                kill(pid, SIGTERM)
                killAt = Date().addingTimeInterval(5)
            } else if let k = killAt, Date() >= k {
                kill(pid, SIGKILL)
            }
            usleep(10_000)
        }
        let elapsed = Date().timeIntervalSince(start)
        // WIFEXITED / WEXITSTATUS / WTERMSIG by hand (macros are not imported).
        let code: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let o = FileManager.default.contents(atPath: outPath) ?? Data()
        let e = FileManager.default.contents(atPath: errPath) ?? Data()
        return Result(status: exited ? code : -1, stdout: String(decoding: o, as: UTF8.self),
                      stderr: String(decoding: e, as: UTF8.self), elapsed: elapsed, timedOut: timedOut)
    }

    /// `bash -c command` under coreutils `timeout` (which kills the whole process group).
    public static func sh(_ command: String, timeout: Double = 120, stdin: String? = nil) throws -> Result {
        try run("/usr/bin/timeout", ["-k", "5", "\(Int(timeout))", "/bin/bash", "-c", command],
                stdin: stdin, timeout: timeout + 15)
    }
}

/// Single-quotes a string for bash.
public func shq(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

/// The favfs binary under test: `$FAVFS_BIN`, else `<package root>/.build/debug/favfs`.
public enum FavFSBinary {
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
    public static var path: String {
        if let p = ProcessInfo.processInfo.environment["FAVFS_BIN"], !p.isEmpty { return p }
        return packageRoot.appendingPathComponent(".build/debug/favfs").path
    }
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }
}

/// Mount table lookups (/proc/self/mountinfo).
public enum MountTable {
    public struct Entry: Sendable { public let mountPoint: String; public let device: String; public let fsType: String }

    public static func entries() -> [Entry] {
        let text = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard f.count > 6, let dash = f.firstIndex(of: "-"), dash + 1 < f.count else { return nil }
            return Entry(mountPoint: unescape(f[4]), device: f[2], fsType: f[dash + 1])
        }
    }

    public static func entry(at path: String) -> Entry? { entries().last { $0.mountPoint == path } }

    /// The superblock options of the mount at `path` (the field after the source), e.g.
    /// `rw,user_id=0,group_id=0,default_permissions,max_read=524288`.
    public static func superOptions(at path: String) -> [String] {
        let text = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n").reversed() {
            let f = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard f.count > 6, unescape(f[4]) == path, let dash = f.firstIndex(of: "-"), dash + 3 < f.count else { continue }
            return f[dash + 3].split(separator: ",").map(String.init)
        }
        return []
    }
    /// The per-mount options of the mount at `path` (mountinfo's sixth field), e.g.
    /// `rw,nosuid,nodev,noexec,noatime`.
    public static func mountOptions(at path: String) -> [String] {
        let text = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n").reversed() {
            let f = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard f.count > 6, unescape(f[4]) == path else { continue }
            return f[5].split(separator: ",").map(String.init)
        }
        return []
    }
    public static func isMounted(_ path: String) -> Bool { entry(at: path) != nil }

    /// mountinfo escapes space, tab, newline and backslash as \ooo.
    static func unescape(_ s: String) -> String {
        var out = [UInt8](), b = Array(s.utf8), i = 0
        while i < b.count {
            if b[i] == UInt8(ascii: "\\"), i + 3 < b.count,
               let v = UInt8(String(decoding: b[(i + 1)...(i + 3)], as: UTF8.self), radix: 8) {
                out.append(v); i += 4
            } else { out.append(b[i]); i += 1 }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// One favfs mount for a test: a temp mount point and (unless given) a temp cache dir.
/// `tearDown()` always leaves no mount and no temp folders behind, whatever the test did.
public final class MountedFavFS: @unchecked Sendable {
    public let remote: String
    public let mountPoint: URL
    public let cacheDir: URL
    public let base: URL
    private let ownsCacheDir: Bool
    public private(set) var lastMount: TimedProcess.Result?
    public var contentDir: URL { cacheDir.appendingPathComponent("content") }
    public var placeholderDB: URL { cacheDir.appendingPathComponent("placeholders.sqlite") }
    public var path: String { mountPoint.path }

    /// Creates the temp folders; does not mount.
    public init(remote: String, cacheDir: URL? = nil, createMountPoint: Bool = true) throws {
        self.remote = remote
        base = URL(fileURLWithPath: "/tmp").appendingPathComponent("favfs-e2e-\(UUID().uuidString.prefix(8))")
        mountPoint = base.appendingPathComponent("mnt")
        if let cacheDir {
            self.cacheDir = cacheDir
            ownsCacheDir = false
        } else {
            self.cacheDir = base.appendingPathComponent("cache")
            ownsCacheDir = true
        }
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        if createMountPoint { try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true) }
        try FileManager.default.createDirectory(at: self.cacheDir, withIntermediateDirectories: true)
    }

    /// Runs `favfs mount` (daemonizing form) and returns its result, whatever it is.
    @discardableResult
    /// `environment`: changes to the environment favfs (and so its daemon) runs with.
    public func mount(extraArgs: [String] = [], password: String? = nil, timeout: Double = 90,
                      environment: [String: String?] = [:]) throws -> TimedProcess.Result {
        var args = ["mount", mountPoint.path, "--remote", remote, "--cache-dir", cacheDir.path]
        if password != nil { args.append("--password-stdin") }
        if let level = ProcessInfo.processInfo.environment["FAVFS_TEST_LOG_LEVEL"] { args += ["--log-level", level] }
        args += extraArgs
        let r = try TimedProcess.run(FavFSBinary.path, args, stdin: password.map { $0 + "\n" }, timeout: timeout,
                                     environment: environment)
        lastMount = r
        return r
    }

    /// Mounts and throws (with favfs's output) unless the mount succeeded and is in the mount table.
    public func mountOrThrow(extraArgs: [String] = [], password: String? = nil, timeout: Double = 90,
                             environment: [String: String?] = [:]) throws {
        let r = try mount(extraArgs: extraArgs, password: password, timeout: timeout, environment: environment)
        guard r.succeeded else { throw ShellError("favfs mount \(remote) failed: \(r)") }
        guard isMounted else { throw ShellError("favfs mount \(remote) exited 0 but \(path) is not in the mount table: \(r)") }
    }

    public var isMounted: Bool { MountTable.isMounted(mountPoint.path) }

    /// Runs `favfs unmount`.
    @discardableResult
    public func unmount(keepCache: Bool = false, timeout: Double = 90) throws -> TimedProcess.Result {
        var args = ["unmount", mountPoint.path]
        if keepCache { args.append("--keep-cache") }
        return try TimedProcess.run(FavFSBinary.path, args, timeout: timeout)
    }

    /// The daemon log's warnings and errors (the last `lines` of them), for a failure message:
    /// a flaky failure in CI then shows its cause without a rerun.
    /// The last `lines` lines of the daemon log, whatever their level (a refused open is
    /// logged at info): for the message of a program that failed in the mount.
    public func logTail(_ lines: Int = 30) -> String {
        guard let text = try? String(contentsOf: cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8) else { return "(no daemon log)" }
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    public func logProblems(lines: Int = 20) -> String {
        guard let text = try? String(contentsOf: cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8) else { return "(no daemon log)" }
        let problems = text.split(separator: "\n").filter { $0.contains(" warning ") || $0.contains(" error ") || $0.contains(" critical ") }
        return problems.isEmpty ? "(no warning or error in the daemon log)" : problems.suffix(lines).joined(separator: "\n")
    }

    /// Unmounts whatever is left (favfs unmount, else abort the FUSE connection and lazy-unmount),
    /// ends leftover favfs processes of this mount point, removes temp folders.
    public func tearDown() {
        // FAVFS_TEST_LOGS=DIR keeps each mount's daemon log (for debugging a failed run).
        if let dir = ProcessInfo.processInfo.environment["FAVFS_TEST_LOGS"] {
            try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try? FileManager.default.copyItem(at: cacheDir.appendingPathComponent("favfs.log"),
                                              to: URL(fileURLWithPath: dir).appendingPathComponent("\(base.lastPathComponent).log"))
        }
        if isMounted { _ = try? unmount(timeout: 60) }
        if let e = MountTable.entry(at: mountPoint.path) {
            // Abort the connection first so nothing stays blocked on a hung daemon.
            if e.fsType.hasPrefix("fuse"), let minor = e.device.split(separator: ":").last {
                try? "1".write(toFile: "/sys/fs/fuse/connections/\(minor)/abort", atomically: false, encoding: .utf8)
            }
            _ = try? TimedProcess.run("/usr/bin/fusermount3", ["-u", "-z", mountPoint.path], timeout: 20)
            if MountTable.isMounted(mountPoint.path) {
                _ = try? TimedProcess.run("/bin/umount", ["-l", mountPoint.path], timeout: 20)
            }
        }
        for pid in Self.processes(mentioning: mountPoint.path) { kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline && !Self.processes(mentioning: mountPoint.path).isEmpty { usleep(50_000) }
        for pid in Self.processes(mentioning: mountPoint.path) { kill(pid, SIGKILL) }
        if !MountTable.isMounted(mountPoint.path) {
            try? FileManager.default.removeItem(at: base)  // a caller-given cache dir lives elsewhere
        }
    }

    /// Pids of processes whose arguments include `arg` exactly (the unique mount point path).
    public static func processes(mentioning arg: String) -> [pid_t] {
        let me = getpid()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return names.compactMap { name -> pid_t? in
            guard let pid = pid_t(name), pid != me,
                  let d = FileManager.default.contents(atPath: "/proc/\(name)/cmdline") else { return nil }
            let args = d.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return args.contains(arg) ? pid : nil
        }
    }
}

/// A loopback port that accepts TCP connections (the kernel completes the handshake) and never
/// answers: a server that hangs. For hang guards.
public final class BlackHoleServer: @unchecked Sendable {
    public let port: Int
    private var fd: Int32

    public init(port: Int? = nil) throws {
        self.port = try port ?? FreePort.next()
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ShellError("socket failed") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(self.port).bigEndian
        let ok = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard ok, listen(fd, 512) == 0 else {
            let e = errno
            Glibc.close(fd)
            throw ShellError("black hole on \(self.port): bind/listen errno \(e)")
        }
    }

    public func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    deinit { close() }
}
