import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// Shared pieces of the FTP integration tests: servers kept for a whole test class, providers
/// made through the factory (as favfs makes them), content sources and sinks as temp files.
enum FTPTest {
    static let awkwardNames = ["a b", "ünïcödé ☃", "#hash", "100%", "what?", "a+b", "it's", "a&b", "semi;colon",
                               "co:lon", "tab\there", "trailing dots...", "x;type=a", "eq=ual; sp"]

    /// The provider for a URL, through `ProviderFactory` (so options and schemes are checked too).
    static func provider(_ url: String, options: [String: String] = [:], secret: String? = FTPTestServer.password,
                         transport: TransportOptions = TransportOptions()) throws -> FTPProvider {
        let made = try ProviderFactory.make(RemoteConfiguration(url: try RemoteURL(url), options: options, secret: secret),
                                            transport: transport)
        guard let ftp = made as? FTPProvider else { throw ShellError("the factory made \(type(of: made)), not FTPProvider") }
        return ftp
    }

    /// A content source holding `data` (a temp file, like the content cache); closed and removed at teardown.
    static func source(_ data: Data, _ test: XCTestCase) throws -> ContentSource {
        let path = NSTemporaryDirectory() + "favfs-ftpsrc-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ShellError("open \(path) failed") }
        test.addTeardownBlock { close(fd); unlink(path) }
        return ContentSource(fd: fd, length: Int64(data.count))
    }

    /// An empty sink file; `contents` reads it back.
    final class Sink {
        let path = NSTemporaryDirectory() + "favfs-ftpsink-\(UUID().uuidString)"
        let fd: Int32
        init() { fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600) }
        deinit { close(fd); unlink(path) }
        var sink: ContentSink { ContentSink(fd: fd) }
        var contents: Data { (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data() }
    }

    /// The error a call throws, checked to be a `ProviderError` of `kind`.
    @discardableResult
    static func expectError<T>(_ kind: ProviderError.Kind, _ body: () async throws -> T,
                               file: StaticString = #filePath, line: UInt = #line) async -> ProviderError? {
        do {
            _ = try await body()
            XCTFail("expected \(kind)", file: file, line: line)
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
            return error
        } catch {
            XCTFail("expected ProviderError \(kind), got \(error)", file: file, line: line)
        }
        return nil
    }

    /// Names in a served folder (server side), for "no temporary file left" checks.
    static func names(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }
}

/// One server per flavor for the whole test process (started on first use): tests use their
/// own subfolders.
final class FTPServers: @unchecked Sendable {
    static let shared = FTPServers()
    private let lock = NSLock()
    private var servers: [String: FTPTestServer] = [:]

    func server(_ key: String, _ flavor: FTPTestServer.Flavor) throws -> FTPTestServer {
        try FTPTestServer.requireAvailable()
        lock.lock(); defer { lock.unlock() }
        if let s = servers[key], s.isRunning { return s }
        let s = try FTPTestServer(flavor)
        try s.start()
        servers[key] = s
        return s
    }
}
