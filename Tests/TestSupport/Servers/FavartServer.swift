import Foundation
import XCTest

/// The Favart fixture server (`Tests/Fixtures/favart_server.py`, Python 3 stdlib; previews need
/// Pillow) serving a temp folder on a free loopback port, in the foreground of a
/// `BackgroundProcess`: stopped by `stop()`, on deinit and at the test process's exit.
public final class FavartServer: @unchecked Sendable {
    /// The served folder (the media root).
    public let root: URL
    public let port: Int
    private let lock = NSLock()
    private var process: BackgroundProcess?

    /// The fixture script, found from this file's place in the repository.
    public static let script: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/favart_server.py").path

    /// The tests' Python (`TestPython`: FAVFS_TEST_PYTHON, else make setup's .venv, else
    /// python3 on PATH), as a full path (posix_spawn needs one).
    public static let python: String? = TestPython.path

    /// True when that Python can make previews (Pillow: Debian's python3-pil, `make setup`).
    public static let hasPillow: Bool = TestPython.canImport(["PIL"])

    /// A server for a new temp folder; `start()` runs it.
    public init() throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-favart-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        port = try FreePort.next()
    }

    /// A started server, or a skip when there is no python3 — a failure under `CI=true`.
    public static func started(file: StaticString = #filePath, line: UInt = #line) throws -> FavartServer {
        guard python != nil else {
            if TestEnvironment.isCI {
                XCTFail("\(TestPython.description) and CI=true", file: file, line: line)
                throw ShellError("python3 missing under CI")
            }
            throw XCTSkip(TestPython.description)
        }
        let server = try FavartServer()
        try server.start()
        return server
    }

    /// `favart://127.0.0.1:PORT/`.
    public var url: String { "favart://127.0.0.1:\(port)/" }
    /// `http://127.0.0.1:PORT`.
    public var httpURL: String { "http://127.0.0.1:\(port)" }

    /// Starts the server (idempotent) and waits until it accepts connections.
    public func start() throws {
        lock.lock(); defer { lock.unlock() }
        if let process, process.isRunning { return }
        guard let python = Self.python else { throw ShellError(TestPython.description) }
        let logFile = root.deletingLastPathComponent().appendingPathComponent(root.lastPathComponent + ".log")
        let p = try BackgroundProcess(python, ["-u", Self.script, root.path, "--port", String(port)], logFile: logFile)
        let deadline = Date().addingTimeInterval(20)
        while !Self.accepts(port) {
            guard p.isRunning else { throw ShellError("the Favart fixture exited: \(p.log())") }
            guard Date() < deadline else { p.stop(); throw ShellError("the Favart fixture did not listen on \(port): \(p.log())") }
            usleep(50_000)
        }
        process = p
    }

    /// Stops the server; the folder stays (a restart serves it again on the same port).
    public func stop() {
        lock.lock(); defer { lock.unlock() }
        process?.stop()
        process = nil
    }

    /// Stops the server and deletes the folder.
    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// The server's log: one line per request (`"POST /file?path=…&id=… HTTP/1.1" 201 -`).
    public func log() -> String { lock.withLock { process?.log() } ?? "" }

    private static func accepts(_ port: Int) -> Bool {
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

    deinit { process?.stop(grace: 1) }
}
