import Foundation

/// A long-running program for tests (a server in the foreground: moto_server, sshd -D, a Python
/// fixture): spawned with posix_spawn and a clean signal mask, output to a log file, killed on
/// `stop()`, on deinit, and at process exit (so a crashed test leaves no server behind).
public final class BackgroundProcess: @unchecked Sendable {
    public let pid: pid_t
    public let logFile: URL
    private let lock = NSLock()
    private var exited = false

    /// Starts `path args`; stdout and stderr go to `logFile`.
    public init(_ path: String, _ args: [String], environment: [String: String]? = nil, logFile: URL) throws {
        self.logFile = logFile
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logFile.path, O_WRONLY | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Only 0-2: tests run in parallel, and a descriptor of another test's mount inherited
        // here would keep that mount busy.
        Descriptors.closeInChild(&actions, from: 3)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        // Own process group: stop() kills the server and anything it started.
        posix_spawnattr_setpgroup(&attr, 0)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let env = (environment.map { ProcessInfo.processInfo.environment.merging($0) { _, new in new } }
            ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([path] + args).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, envp)
        guard rc == 0 else { throw ShellError("cannot run \(path): \(String(cString: strerror(rc)))") }
        self.pid = pid
        ProcessReaper.register(pid)
    }

    /// True while the program runs.
    public var isRunning: Bool {
        lock.lock(); defer { lock.unlock() }
        if exited { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exited = true; return false }
        return true
    }

    /// The log so far (for error messages).
    public func log() -> String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// SIGTERM to the process group, then SIGKILL after `grace` seconds; waits for the exit.
    public func stop(grace: Double = 3) {
        lock.lock(); defer { lock.unlock() }
        guard !exited else { return }
        kill(-pid, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        var status: Int32 = 0
        while Date() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid { exited = true; break }
            usleep(20_000)
        }
        if !exited {
            kill(-pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exited = true
        }
        ProcessReaper.unregister(pid)
    }

    deinit { stop(grace: 1) }
}

/// Kills registered process groups when the test process exits, however it exits normally.
public enum ProcessReaper {
    nonisolated(unsafe) private static var pids = Set<pid_t>()
    nonisolated(unsafe) private static var cleanups: [@Sendable () -> Void] = []
    private static let lock = NSLock()
    nonisolated(unsafe) private static var installed = false

    static func register(_ pid: pid_t) {
        lock.lock(); defer { lock.unlock() }
        pids.insert(pid)
        installIfNeeded()
    }

    /// Runs `cleanup` at exit (for servers that daemonize themselves, such as apache2 -k start).
    public static func atExit(_ cleanup: @escaping @Sendable () -> Void) {
        lock.lock(); defer { lock.unlock() }
        cleanups.append(cleanup)
        installIfNeeded()
    }

    private static func installIfNeeded() {
        if !installed {
            installed = true
            atexit { ProcessReaper.killAll() }
        }
    }

    static func unregister(_ pid: pid_t) {
        lock.lock(); defer { lock.unlock() }
        pids.remove(pid)
    }

    static func killAll() {
        lock.lock(); let all = pids; let blocks = cleanups; lock.unlock()
        for pid in all { kill(-pid, SIGKILL) }
        for block in blocks { block() }
    }
}
