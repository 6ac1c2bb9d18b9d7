import Foundation
import XCTest

/// A fixture server of ours written in Python (`Tests/Fixtures/NAME.py`, standard library
/// only) serving a temp folder on a free loopback port, in the foreground of a
/// `BackgroundProcess`: stopped by `stop()`, on deinit and at the test process's exit. The
/// cloud fixtures (`DropboxServer`, `OneDriveServer`) run on it and add their own options.
public final class PythonFixture: @unchecked Sendable {
    /// What the fixture stands for, in messages ("the Dropbox fixture").
    public let name: String
    /// The served folder.
    public let root: URL
    public let port: Int
    private let script: String
    private let lock = NSLock()
    private var process: BackgroundProcess?

    /// A fixture of `Tests/Fixtures/<script>` for a new temp folder named `favfs-<folder>-…`.
    public init(name: String, script: String, folder: String) throws {
        self.name = name
        self.script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/\(script)").path
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-\(folder)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        port = try FreePort.next()
    }

    /// Throws a skip when there is no python3 — a failure under `CI=true`.
    public static func requirePython(file: StaticString = #filePath, line: UInt = #line) throws {
        guard TestPython.path == nil else { return }
        if TestEnvironment.isCI {
            XCTFail("\(TestPython.description) and CI=true", file: file, line: line)
            throw ShellError("python3 missing under CI")
        }
        throw XCTSkip(TestPython.description)
    }

    /// `http://127.0.0.1:PORT`.
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Starts the script with the served folder, `--port` and `arguments` (idempotent), and
    /// waits until it accepts connections.
    public func start(arguments: [String]) throws {
        lock.lock(); defer { lock.unlock() }
        if let process, process.isRunning { return }
        guard let python = TestPython.path else { throw ShellError(TestPython.description) }
        let logFile = root.deletingLastPathComponent().appendingPathComponent(root.lastPathComponent + ".log")
        let p = try BackgroundProcess(python, ["-u", script, root.path, "--port", String(port)] + arguments, logFile: logFile)
        let deadline = Date().addingTimeInterval(20)
        while !PortProbe.accepts(port) {
            guard p.isRunning else { throw ShellError("\(name) exited: \(p.log())") }
            guard Date() < deadline else { p.stop(); throw ShellError("\(name) did not listen on \(port): \(p.log())") }
            usleep(50_000)
        }
        process = p
    }

    public func stop() {
        lock.lock(); defer { lock.unlock() }
        process?.stop()
        process = nil
    }

    /// Stops the process (SIGSTOP): the kernel still accepts connections, nothing answers — a
    /// server that hangs. `resume()` lets it go on.
    public func pause() { lock.withLock { process.map { _ = kill($0.pid, SIGSTOP) } } }
    public func resume() { lock.withLock { process.map { _ = kill($0.pid, SIGCONT) } } }

    /// Stops the server and deletes the folder.
    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// The server's log: one line per request.
    public func log() -> String { lock.withLock { process?.log() } ?? "" }

    /// POSTs to one of the fixture's own control routes (`/fixture/reset-cursors`).
    public func control(_ path: String) throws {
        let r = try TimedProcess.run("/usr/bin/curl", ["-sS", "-f", "-X", "POST", endpoint + path], timeout: 20)
        guard r.succeeded else { throw ShellError("\(name): POST \(path) failed: \(r)") }
    }

    deinit { process?.stop(grace: 1) }
}

/// Whether something accepts TCP connections on a loopback port.
enum PortProbe {
    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
