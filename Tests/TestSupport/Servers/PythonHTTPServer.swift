import Foundation

/// `python3 -m http.server` serving a temp folder on a free loopback port: names-only index
/// pages, no ETags, HTTP/1.0 (no kept-alive connections), Range ignored (always 200 with the
/// whole file), preconditions ignored.
public final class PythonHTTPServer: @unchecked Sendable {
    public static let python = "/usr/bin/python3"
    public let root: URL
    /// What `/` serves.
    public let documentRoot: URL
    public let port: Int
    private var process: BackgroundProcess?
    public var baseURL: String { "http://127.0.0.1:\(port)/" }

    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: python) }

    public init(port: Int? = nil) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-pyhttp-\(UUID().uuidString.prefix(8))")
        documentRoot = root.appendingPathComponent("files")
        self.port = try port ?? FreePort.next()
        try FileManager.default.createDirectory(at: documentRoot, withIntermediateDirectories: true)
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    public func start() throws {
        guard !isRunning else { return }
        let p = try BackgroundProcess(Self.python, ["-m", "http.server", "--bind", "127.0.0.1", "\(port)", "--directory", documentRoot.path],
                                      logFile: root.appendingPathComponent("server.log"))
        process = p
        guard FreePort.waitUntilListening(port: port, timeout: 10) else {
            p.stop()
            throw ShellError("python3 -m http.server is not listening on \(port): \(p.log())")
        }
    }

    public func stop() {
        process?.stop()
        process = nil
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline && FreePort.isListening(port: port) { usleep(20_000) }
    }

    /// The request log (python prints one line per request to stderr).
    public func log() -> String { process?.log() ?? "" }

    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    deinit { process?.stop(grace: 1) }
}
