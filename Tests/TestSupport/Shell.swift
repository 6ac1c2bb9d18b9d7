import Foundation

public struct ShellError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// Runs programs for tests: output captured, exit status returned.
public enum Shell {
    public struct Result: Sendable { public let status: Int32; public let output: String; public let error: String }

    /// Runs a program and waits for it. Spawned with posix_spawn and reaped with waitpid, not
    /// Foundation's Process: on Linux, Process passes the calling (Swift concurrency) thread's
    /// blocked signal mask to the child — a daemon such as apache2 then ignores SIGTERM — and its
    /// SIGCHLD-based `waitUntilExit` can miss a child that exits while forking a daemon, hanging.
    @discardableResult
    public static func run(_ path: String, _ args: [String], stdin: String? = nil, environment: [String: String]? = nil,
                           cwd: String? = nil) throws -> Result {
        var inPipe: [Int32] = [0, 0], outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0]
        // CLOEXEC everywhere: no other test's pipe or socket leaks into a spawned daemon.
        guard pipe(&inPipe) == 0, pipe(&outPipe) == 0, pipe(&errPipe) == 0 else {
            throw ShellError("pipe: \(String(cString: strerror(errno)))")
        }
        for fd in inPipe + outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
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
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let env = (environment.map { ProcessInfo.processInfo.environment.merging($0) { _, new in new } }
            ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        // posix_spawn_file_actions_addchdir_np is not visible from Swift: change folder in sh.
        let (path, args) = cwd.map { ("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", $0, path] + args) } ?? (path, args)
        let argv = ([path] + args).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }

        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, envp)
        close(inPipe[0]); close(outPipe[1]); close(errPipe[1])
        guard rc == 0 else {
            close(inPipe[1]); close(outPipe[0]); close(errPipe[0])
            throw ShellError("cannot run \(path): \(String(cString: strerror(rc)))")
        }
        // Feed stdin and drain stderr on their own threads so no pipe fills up.
        let writer = Thread { [inFD = inPipe[1]] in
            if let stdin { writeAll(inFD, Data(stdin.utf8)) }
            close(inFD)
        }
        writer.start()
        // Handed over under a lock: Thread.isFinished orders nothing (ThreadSanitizer saw the race).
        let errBox = LockedData()
        let errReader = Thread { [errFD = errPipe[0]] in errBox.set(readAll(errFD)) }
        errReader.start()
        let outData = readAll(outPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // A daemonizing child may leave stderr open in its grandchild: wait briefly only.
        let deadline = Date().addingTimeInterval(5)
        while (!errReader.isFinished || !writer.isFinished) && Date() < deadline { usleep(1000) }
        close(outPipe[0])
        let exit: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: exit, output: String(decoding: outData, as: UTF8.self),
                      error: String(decoding: errBox.get() ?? Data(), as: UTF8.self))
    }

    /// Bytes one thread hands to another.
    private final class LockedData: @unchecked Sendable {
        private let lock = NSLock()
        private var data: Data?
        func set(_ d: Data) { lock.withLock { data = d } }
        func get() -> Data? { lock.withLock { data } }
    }

    private static func readAll(_ fd: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            data.append(buffer, count: n)
        }
        return data
    }

    private static func writeAll(_ fd: Int32, _ data: Data) {
        data.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                done += n
            }
        }
    }

    /// Runs `bash -c command`.
    @discardableResult
    public static func sh(_ command: String, stdin: String? = nil, environment: [String: String]? = nil) throws -> Result {
        try run("/bin/bash", ["-c", command], stdin: stdin, environment: environment)
    }

    public static func md5Hex(_ s: String) -> String {
        let r = try? run("/usr/bin/md5sum", [], stdin: s)
        return String((r?.output ?? "").prefix(32))
    }
}

/// Loopback ports for test servers.
public enum FreePort {
    /// A port that was free a moment ago (bound to 0, read back, closed).
    public static func next() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ShellError("socket failed") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw ShellError("bind failed") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    public static func isListening(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    public static func waitUntilListening(port: Int, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if isListening(port: port) { return true }
            usleep(50_000)
        }
        return false
    }
}

/// Whether tests must fail (CI=true) rather than skip when a server or /dev/fuse is missing.
public enum TestEnvironment {
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }
    public static var hasFUSE: Bool { FileManager.default.fileExists(atPath: "/dev/fuse") }
}
