import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// One moto server for all S3 tests in this process; every test works below its own key prefix.
enum S3TestServer {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var server: MotoServer?

    static func shared(file: StaticString = #filePath, line: UInt = #line) throws -> MotoServer {
        lock.lock(); defer { lock.unlock() }
        if let server { return server }
        let s = try ServerRequirement.moto(bucket: "favfs-provider-tests", file: file, line: line)
        try s.start()
        server = s
        return s
    }
}

/// A test's corner of the bucket: a unique prefix, a provider rooted there, and files for
/// content sources and sinks.
final class S3Fixture {
    let server: MotoServer
    let prefix: String
    private var tempPaths: [String] = []
    private var fds: [Int32] = []

    init(_ test: String) throws {
        server = try S3TestServer.shared()
        prefix = "\(test)-\(UUID().uuidString.prefix(8))/"
    }

    deinit {
        for fd in fds { close(fd) }
        for path in tempPaths { unlink(path) }
    }

    /// The key of a path below this fixture's prefix.
    func key(_ path: String) -> String { prefix + path }

    func configuration(_ options: [String: String] = [:], secret: String? = nil) -> RemoteConfiguration {
        var all = ["endpoint": server.endpoint, "access_key_id": server.accessKeyId]
        all.merge(options) { _, new in new }
        return RemoteConfiguration(url: try! RemoteURL("s3://\(server.bucket)/\(prefix)"), options: all,
                                   secret: secret ?? server.secretAccessKey)
    }

    func provider(_ options: [String: String] = [:], secret: String? = nil) throws -> S3Provider {
        try XCTUnwrap(ProviderFactory.make(configuration(options, secret: secret)) as? S3Provider)
    }

    func seed(_ files: [String: String], folders: [String] = []) throws {
        try server.seed(files: Dictionary(uniqueKeysWithValues: files.map { (key($0.key), Data($0.value.utf8)) }),
                        folderMarkers: folders.map { key($0) + "/" })
    }

    /// A content source holding `data` (a temp file, like the content cache).
    func source(_ data: Data) throws -> ContentSource {
        let path = NSTemporaryDirectory() + "favfs-s3src-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        tempPaths.append(path)
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ShellError("open \(path) failed") }
        fds.append(fd)
        return ContentSource(fd: fd, length: Int64(data.count))
    }

    /// An empty sink file; `contents` reads it back.
    func sink() throws -> (ContentSink, () -> Data) {
        let path = NSTemporaryDirectory() + "favfs-s3sink-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        tempPaths.append(path)
        let fd = open(path, O_RDWR)
        guard fd >= 0 else { throw ShellError("open \(path) failed") }
        fds.append(fd)
        return (ContentSink(fd: fd), { (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data() })
    }
}

/// Asserts that `body` throws a `ProviderError` of `kind`; returns it.
@discardableResult
func s3AssertError<T>(_ kind: ProviderError.Kind, file: StaticString = #filePath, line: UInt = #line,
                            _ body: () async throws -> T) async -> ProviderError? {
    do {
        _ = try await body()
        XCTFail("expected \(kind), got success", file: file, line: line)
    } catch let error as ProviderError {
        XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
        return error
    } catch {
        XCTFail("expected ProviderError \(kind), got \(error)", file: file, line: line)
    }
    return nil
}
