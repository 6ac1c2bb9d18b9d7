import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// One sshd for all SFTP provider tests in this process (started on first use), plus helpers.
enum SFTPTestServer {
    nonisolated(unsafe) private static var server: SSHServer?
    private static let lock = NSLock()

    static func shared() throws -> SSHServer {
        try lock.withLock {
            if let server { return server }
            let s = try ServerRequirement.sshd()
            try s.start()
            server = s
            return s
        }
    }

    /// A provider made the way `favfs mount` makes it, for the folder `area` below the served root.
    static func provider(_ s: SSHServer, area: String = "", options: [String: String] = [:], secret: String? = nil,
                         port: Int? = nil) throws -> SFTPProvider {
        let base = "sftp://\(s.user)@127.0.0.1:\(port ?? s.port)\(s.files.path)" + (area.isEmpty ? "" : "/\(area)")
        var all = ["key": s.clientKey, "known_hosts": s.knownHosts]
        all.merge(options) { _, new in new }
        let configuration = RemoteConfiguration(url: try RemoteURL(base), options: all, secret: secret)
        let made = try ProviderFactory.make(configuration)
        guard let provider = made as? SFTPProvider else { throw ShellError("sftp:// made a \(type(of: made))") }
        return provider
    }

    /// A fresh folder below the served root.
    static func area(_ s: SSHServer, _ label: String) throws -> (name: String, url: URL) {
        let name = "\(label)-\(UUID().uuidString.prefix(8).lowercased())"
        let url = s.files.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return (name, url)
    }

    /// Reads `range` into a temp file; returns what the provider reported and the bytes at `range`.
    static func read(_ p: SFTPProvider, _ item: Item, _ range: Range<Int64>) async throws -> (Range<Int64>, Data) {
        let path = NSTemporaryDirectory() + "favfs-sftp-read-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw ShellError("open \(path)") }
        defer { close(fd); unlink(path) }
        let written = try await p.readContents(of: item, range: range, into: ContentSink(fd: fd))
        var out = [UInt8](repeating: 0, count: Int(written.count))
        let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(written.lowerBound)) }
        return (written, Data(out.prefix(max(0, n))))
    }

    /// A content source holding `data` (a temp file, like the content cache).
    static func source(_ data: Data, _ test: XCTestCase) throws -> ContentSource {
        let path = NSTemporaryDirectory() + "favfs-sftp-up-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ShellError("open \(path) failed") }
        test.addTeardownBlock { close(fd); unlink(path) }
        return ContentSource(fd: fd, length: Int64(data.count))
    }

    /// Expects a ProviderError of `kind`; returns it.
    @discardableResult
    static func expectError(_ kind: ProviderError.Kind, _ body: () async throws -> Void,
                            file: StaticString = #filePath, line: UInt = #line) async -> ProviderError? {
        do {
            try await body()
            XCTFail("expected \(kind)", file: file, line: line)
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
            return error
        } catch {
            XCTFail("expected a ProviderError \(kind), got \(error)", file: file, line: line)
        }
        return nil
    }

    /// Sets a file's mtime an hour back (a stable version, distinct from anything written now).
    static func age(_ url: URL, by seconds: Double = 3600) throws {
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-seconds)], ofItemAtPath: url.path)
    }
}
