import Foundation

/// The lying WebDAV server (`Tests/Fixtures/hostile_dav.py`) on a free loopback port, in the
/// foreground of a `BackgroundProcess`: stop it with `process.stop()`.
public struct HostileDAVServer {
    public let process: BackgroundProcess
    public let port: Int

    /// Starts the server and waits until it listens.
    public init() throws {
        guard let python = TestPython.path else { throw ShellError("the hostile server needs python3: \(TestPython.description)") }
        let port = try FreePort.next()
        let script = URL(fileURLWithPath: FavartServer.script).deletingLastPathComponent().appendingPathComponent("hostile_dav.py").path
        let log = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-hostile-\(port).log")
        let p = try BackgroundProcess(python, [script, "\(port)"], logFile: log)
        guard FreePort.waitUntilListening(port: port, timeout: 10) else {
            p.stop()
            throw ShellError("the hostile server did not start: \(p.log())")
        }
        process = p
        self.port = port
    }
}
