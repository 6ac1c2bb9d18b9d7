import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// What the HTTP index tests share: the awkward names, seeding, temp sink files, error checks.
enum HTTPIndexFixture {
    static let awkwardNames = ["a b", "ünïcödé ☃", "#hash", "100%", "what?", "a+b", "it's", "a&b", "semi;colon",
                               "co:lon", "tab\there", "trailing dots...", "=eq", "<lt>", "\"quote\""]
    static let folderName = "ünïcödé ☃ #dir% it's? a&b"
    static let innerName = "inner a&b=c;d+e.txt"
    static let bigName = "big.bin"
    static let bigSize = 300_000

    static func content(_ name: String) -> Data { Data("content of \(name)\n".utf8) }

    static func bigContent() -> Data {
        var rng = SystemRandomNumberGenerator()
        return Data((0..<bigSize).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    /// Awkward files and folders, an empty file, a big file, all backdated an hour (Apache's
    /// ETag for a file changed in the last second is weak).
    static func seed(_ root: URL) throws {
        var files: [String: Data] = [:]
        for name in awkwardNames { files[name] = content(name) }
        for name in awkwardNames { files["\(folderName)/\(name) dir/\(innerName)"] = content(name + innerName) }
        files["\(folderName)/\(innerName)"] = content(innerName)
        files["empty"] = Data()
        files[bigName] = bigContent()
        try DirectorySeeding.seed(root, files: files, folders: ["empty folder"])
        try backdate(root)
    }

    static func backdate(_ folder: URL) throws {
        let old = Date().addingTimeInterval(-3600)
        let all = [folder] + (FileManager.default.subpaths(atPath: folder.path) ?? []).map { folder.appendingPathComponent($0) }
        for url in all { try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: url.path) }
    }

    /// Disk truth for the items of one folder: name → (isFolder, size, mtime).
    static func diskListing(_ folder: URL) throws -> [String: (isFolder: Bool, size: Int64, mtime: Double)] {
        var out: [String: (Bool, Int64, Double)] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let attrs = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
            let isFolder = attrs[.type] as? FileAttributeType == .typeDirectory
            out[name] = (isFolder, isFolder ? 0 : (attrs[.size] as! NSNumber).int64Value,
                         (attrs[.modificationDate] as! Date).timeIntervalSince1970)
        }
        return out
    }
}

/// Helpers every HTTP index test case uses; subclasses set `remote` (for error checks).
class HTTPIndexTestCase: XCTestCase {
    var remote = ""
    private var tempFiles: [String] = []

    override func tearDown() {
        for path in tempFiles { unlink(path) }
        tempFiles = []
        super.tearDown()
    }

    func makeProvider(baseURL: String, remote: String, credentials: CurlCredentials? = nil,
                      metadata: HTTPIndexMetadata = .head, headConcurrency: Int = 8) -> HTTPIndexProvider {
        var options = TransportOptions()
        options.connectTimeout = 5
        options.maxConnectionsPerHost = max(8, headConcurrency)
        return HTTPIndexProvider(configuration: .init(baseURL: baseURL, remoteDescription: remote, credentials: credentials,
                                                      metadata: metadata, headConcurrency: headConcurrency),
                                 transport: CurlTransport(options: options))
    }

    func tempFile() throws -> (path: String, fd: Int32) {
        let path = NSTemporaryDirectory() + "favfs-httpindex-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw ShellError("open \(path) failed") }
        tempFiles.append(path)
        return (path, fd)
    }

    /// Reads `range` into a fresh sparse file; returns what the provider reported and the file's bytes.
    func read(_ provider: HTTPIndexProvider, _ item: Item, _ range: Range<Int64>) async throws -> (Range<Int64>, Data) {
        let (path, fd) = try tempFile()
        defer { close(fd) }
        let got = try await provider.readContents(of: item, range: range, into: ContentSink(fd: fd))
        return (got, try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func readAll(_ provider: HTTPIndexProvider, _ item: Item, file: StaticString = #filePath, line: UInt = #line) async throws -> Data {
        let (got, data) = try await read(provider, item, 0..<max(item.size, 1))
        XCTAssertEqual(got, 0..<item.size, item.name, file: file, line: line)
        return data
    }

    @discardableResult
    func expectError(_ kind: ProviderError.Kind, path: String? = nil, _ body: () async throws -> Void,
                     file: StaticString = #filePath, line: UInt = #line) async -> ProviderError? {
        do {
            try await body()
            XCTFail("expected \(kind)", file: file, line: line)
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
            XCTAssertEqual(error.remote, remote, "the error names the remote", file: file, line: line)
            if let path { XCTAssertEqual(error.path, path, "the error names the path", file: file, line: line) }
            XCTAssertTrue(error.description.contains(remote), "\(error)", file: file, line: line)
            return error
        } catch {
            XCTFail("expected a ProviderError, got \(error)", file: file, line: line)
        }
        return nil
    }
}

/// Starts python's http.server or nginx for a test, or skips when missing (fails under CI=true).
enum HTTPIndexServers {
    static func python(file: StaticString = #filePath, line: UInt = #line) throws -> PythonHTTPServer {
        try require(PythonHTTPServer.isAvailable, "python3 (\(PythonHTTPServer.python))", file: file, line: line)
        return try PythonHTTPServer()
    }

    static func nginx(exactSizes: Bool = true, file: StaticString = #filePath, line: UInt = #line) throws -> NginxServer {
        try require(NginxServer.isAvailable, "nginx (\(NginxServer.binary))", file: file, line: line)
        return try NginxServer(exactSizes: exactSizes)
    }

    private static func require(_ available: Bool, _ what: String, file: StaticString, line: UInt) throws {
        guard !available else { return }
        if TestEnvironment.isCI {
            XCTFail("\(what) is not installed and CI=true", file: file, line: line)
            throw ShellError("\(what) missing under CI")
        }
        throw XCTSkip("\(what) is not installed")
    }
}
