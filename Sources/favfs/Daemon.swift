import Foundation

/// Starts `favfs mount … --notify-fd 3` as a detached child and waits for its word: the child
/// writes `mounted` once the mount answers, or `error STATUS: …` (STATUS: its exit status). The child's output goes to a log file.
enum Daemon {
    /// `mounted(offline:)`: the reason the server could not be reached, when the mount came up
    /// from the last session's placeholders instead.
    enum Outcome { case mounted(offline: String?), failed(String, ExitStatus) }

    static func spawn(arguments: [String], stdin: String?, logPath: String, timeout: Double = 120) throws -> Outcome {
        var notify: [Int32] = [0, 0], input: [Int32] = [0, 0]
        guard pipe(&notify) == 0, pipe(&input) == 0 else {
            throw CLIError("favfs: cannot create a pipe: \(String(cString: strerror(errno)))", status: .ioError)
        }
        // Our ends must not leak into the child (it gets copies at 0 and 3 only).
        for fd in notify + input { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var fa = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fa)
        defer { posix_spawn_file_actions_destroy(&fa) }
        posix_spawn_file_actions_adddup2(&fa, input[0], 0)
        posix_spawn_file_actions_addopen(&fa, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&fa, 1, 2)
        posix_spawn_file_actions_adddup2(&fa, notify[1], 3)
        // Nothing else the caller had open: the daemon lives long, and an inherited descriptor of
        // a file in another mount would keep that mount busy (unmount: EBUSY) for all that time.
        // (posix_spawn_file_actions_addclosefrom_np is not visible from Swift.)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd >= 3 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }

        let exe = selfExecutable()
        let argv = ([exe] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, exe, &fa, nil, argv, environ)
        close(notify[1]); close(input[0])
        guard rc == 0 else {
            close(notify[0]); close(input[1])
            throw CLIError("favfs: cannot start the mount process: \(String(cString: strerror(rc)))", status: .ioError)
        }
        if let stdin { _ = stdin.withCString { write(input[1], $0, strlen($0)) } }
        close(input[1])

        let reader = LineSocket(fd: notify[0])
        defer { reader.close() }
        let deadline = Date().addingTimeInterval(timeout)
        while let line = reader.readLine(timeout: max(0.001, deadline.timeIntervalSinceNow)) {
            if line == "mounted" { return .mounted(offline: nil) }
            if line.hasPrefix("mounted offline: ") { return .mounted(offline: String(line.dropFirst("mounted offline: ".count))) }
            if line.hasPrefix("error "), let colon = line.firstIndex(of: ":") {
                let status = Int32(line[line.index(line.startIndex, offsetBy: 6)..<colon]).flatMap(ExitStatus.init(rawValue:)) ?? .failure
                return .failed(String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces), status)
            }
        }
        var status: Int32 = 0
        let exited = waitpid(pid, &status, WNOHANG) == pid
        let tail = (try? String(contentsOfFile: logPath, encoding: .utf8))?
            .split(separator: "\n").suffix(8).joined(separator: "\n") ?? ""
        if !exited {
            kill(pid, SIGTERM)
            return .failed("the mount did not answer within \(Int(timeout)) s; log \(logPath):\n\(tail)", .temporaryFailure)
        }
        return .failed("the mount process exited (status \(status >> 8)) before mounting; log \(logPath):\n\(tail)",
                       ExitStatus(rawValue: status >> 8) ?? .software)
    }

    static func selfExecutable() -> String {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        return n > 0 ? String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }
}

/// The child's side: report to the parent once, then let go of the pipe.
final class Notifier: @unchecked Sendable {
    private var fd: Int32?
    private let lock = NSLock()
    init(fd: Int32?) { self.fd = fd }

    func mounted(offline reason: String? = nil) {
        send(reason.map { "mounted offline: " + $0.replacingOccurrences(of: "\n", with: " ") } ?? "mounted")
    }
    func failed(_ message: String, status: ExitStatus) {
        send("error \(status.rawValue): " + message.replacingOccurrences(of: "\n", with: " "))
    }

    private func send(_ line: String) {
        lock.withLock {
            guard let fd else { return }
            _ = (line + "\n").withCString { write(fd, $0, strlen($0)) }
            close(fd)
            self.fd = nil
        }
    }
}
