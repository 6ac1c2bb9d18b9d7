import Foundation

/// Wraps `ApacheServer` to work around two fixture problems seen on this machine:
/// 1. Debian's apache2 has mod_log_config and mod_unixd compiled in and refuses to start on their
///    `LoadModule` ("module log_config_module is built-in and can't be loaded"): those lines are removed.
/// 2. `ApacheServer.start()` runs `apache2 -k start` through `Shell.run`, whose stdout/stderr pipes
///    are inherited by the daemonized httpd, so `readDataToEndOfFile` never returns (the test hangs).
///    Start and stop go through `TimedProcess` (output to files, time-limited) instead.
/// Both are no-ops to keep once the fixture is fixed.
public final class TestApache: @unchecked Sendable {
    public let server: ApacheServer
    public private(set) var isRunning = false
    public var documentRoot: URL { server.documentRoot }
    public var port: Int { server.port }
    public var davURL: String { server.davURL }
    public var conf: String { server.root.appendingPathComponent("httpd.conf").path }

    public init(auth: ApacheServer.Auth = .none) throws {
        server = try ApacheServer(auth: auth)
        let builtIn = Set(try TimedProcess.run("/usr/sbin/apache2", ["-l"], timeout: 30).stdout
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        let text = try String(contentsOfFile: conf, encoding: .utf8)
        let kept = text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            let f = line.split(separator: " ")
            guard f.count == 3, f[0] == "LoadModule" else { return true }
            let source = f[2].split(separator: "/").last.map { $0.replacingOccurrences(of: ".so", with: ".c") } ?? ""
            return !builtIn.contains(source)  // mod_log_config.so -> mod_log_config.c
        }
        try kept.joined(separator: "\n").write(toFile: conf, atomically: true, encoding: .utf8)
    }

    public func start() throws {
        try server.fixOwnership()
        try? FileManager.default.removeItem(at: server.root.appendingPathComponent("httpd.pid"))
        let r = try TimedProcess.run("/usr/sbin/apache2", ["-f", conf, "-k", "start"], timeout: 30)
        guard r.succeeded else { throw ShellError("apache2 did not start: \(r) \(server.errorLog())") }
        isRunning = true
        guard FreePort.waitUntilListening(port: port, timeout: 10) else {
            throw ShellError("apache2 is not listening on \(port): \(server.errorLog())")
        }
    }

    public func stop() {
        guard isRunning else { return }
        _ = try? TimedProcess.run("/usr/sbin/apache2", ["-f", conf, "-k", "stop"], timeout: 30)
        let pidFile = server.root.appendingPathComponent("httpd.pid").path
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && FreePort.isListening(port: port) { usleep(50_000) }
        while Date() < deadline && FileManager.default.fileExists(atPath: pidFile) { usleep(50_000) }
        isRunning = false
    }

    public func accessLogLines() -> [String] { server.accessLogLines() }
    public func errorLog() -> String { server.errorLog() }

    public func remove() {
        stop()
        server.remove()
    }

    deinit { stop() }
}
