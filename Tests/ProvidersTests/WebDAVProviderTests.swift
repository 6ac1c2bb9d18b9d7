import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// The WebDAV provider against a real Apache mod_dav on loopback.
final class WebDAVProviderTests: XCTestCase {
    static let awkwardNames = ["a b", "ünïcödé ☃", "#hash", "100%", "what?", "a+b", "it's", "a&b", "semi;colon",
                               "co:lon", "tab\there", "trailing dots...", "=eq"]
    static let folderName = "ünïcödé ☃ #dir% it's?"
    static let innerName = "inner a&b=c;d+e.txt"

    private var server: ApacheServer!
    private var provider: WebDAVProvider!
    private var tempFiles: [String] = []

    override func setUpWithError() throws {
        server = try ServerRequirement.apache()
        let root = server.documentRoot
        for name in Self.awkwardNames {
            try Data("content of \(name)\n".utf8).write(to: root.appendingPathComponent(name))
        }
        let folder = root.appendingPathComponent(Self.folderName)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("inside\n".utf8).write(to: folder.appendingPathComponent(Self.innerName))
        try Self.makeOld(root)
        try server.start()
        provider = makeProvider(server)
    }

    override func tearDown() {
        provider = nil
        server?.remove()
        server = nil
        for path in tempFiles { unlink(path) }
    }

    /// Backdates every file: Apache gives files modified within the last second a weak ETag,
    /// which cannot pin a read (If-Match compares strongly).
    static func makeOld(_ folder: URL) throws {
        let old = Date().addingTimeInterval(-3600)
        let all = [folder] + (FileManager.default.subpaths(atPath: folder.path) ?? []).map { folder.appendingPathComponent($0) }
        for url in all { try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: url.path) }
    }

    private func makeProvider(_ server: ApacheServer, credentials: CurlCredentials? = nil) -> WebDAVProvider {
        WebDAVProvider(configuration: .init(baseURL: server.baseURL, remoteDescription: server.davURL, credentials: credentials),
                       transport: CurlTransport())
    }

    private func tempFile() throws -> (path: String, fd: Int32) {
        let path = NSTemporaryDirectory() + "favfs-webdav-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw ShellError("open \(path) failed") }
        tempFiles.append(path)
        return (path, fd)
    }

    private func readAll(_ item: Item) async throws -> Data {
        let (path, fd) = try tempFile()
        defer { close(fd) }
        let got = try await provider.readContents(of: item, range: 0..<item.size, into: ContentSink(fd: fd))
        XCTAssertEqual(got, 0..<item.size, item.name)
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    private func expectError(_ kind: ProviderError.Kind, _ body: () async throws -> Void,
                             file: StaticString = #filePath, line: UInt = #line) async -> ProviderError? {
        do {
            try await body()
            XCTFail("expected \(kind)", file: file, line: line)
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
            XCTAssertEqual(error.remote, server.davURL, file: file, line: line)
            return error
        } catch {
            XCTFail("expected a ProviderError, got \(error)", file: file, line: line)
        }
        return nil
    }

    func testAwkwardNamesRoundTrip() async throws {
        let page = try await provider.enumerateItems(in: .rootContainer, page: nil)
        XCTAssertNil(page.nextPage)
        XCTAssertTrue(page.skipped.isEmpty)
        XCTAssertEqual(Set(page.items.map(\.name)), Set(Self.awkwardNames + [Self.folderName]))
        for listed in page.items where listed.kind == .file {
            let content = Data("content of \(listed.name)\n".utf8)
            XCTAssertEqual(listed.identifier, ItemIdentifier("/" + listed.name))
            XCTAssertEqual(listed.size, Int64(content.count), listed.name)
            XCTAssertNotNil(listed.version, listed.name)
            XCTAssertNotNil(listed.modified, listed.name)
            let fetched = try await provider.item(for: listed.identifier)
            XCTAssertEqual(fetched, listed, listed.name)
            let bytes = try await readAll(fetched)
            XCTAssertEqual(bytes, content, listed.name)
        }

        let folderID = ItemIdentifier("/" + Self.folderName)
        let folder = try await provider.item(for: folderID)
        XCTAssertEqual(folder.kind, .folder)
        XCTAssertEqual(folder.identifier, folderID)
        XCTAssertEqual(page.items.first { $0.identifier == folderID }?.kind, .folder)
        let inner = try await provider.enumerateAll(in: folderID)
        XCTAssertEqual(inner.map(\.identifier), [folderID.child(Self.innerName)])
        let innerItem = try await provider.item(for: folderID.child(Self.innerName))
        XCTAssertEqual(innerItem.kind, .file)
        let innerBytes = try await readAll(innerItem)
        XCTAssertEqual(innerBytes, Data("inside\n".utf8))

        let root = try await provider.item(for: .rootContainer)
        XCTAssertEqual(root.kind, .folder)
    }

    func testFiveThousandFilesListCompletely() async throws {
        let many = server.documentRoot.appendingPathComponent("many")
        try FileManager.default.createDirectory(at: many, withIntermediateDirectories: true)
        let names = (0..<5000).map { "file \($0) #\($0 % 7).txt" }
        for name in names { _ = FileManager.default.createFile(atPath: many.appendingPathComponent(name).path, contents: nil) }
        try server.fixOwnership()
        let items = try await provider.enumerateAll(in: ItemIdentifier("/many"))
        XCTAssertEqual(items.count, 5000)
        XCTAssertEqual(Set(items.map(\.name)), Set(names))
        XCTAssertTrue(items.allSatisfy { $0.kind == .file && $0.size == 0 })
    }

    func testRangedReadOfTheMiddleLandsAtItsOffset() async throws {
        let size = 4 << 20
        let content = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) })
        try content.write(to: server.documentRoot.appendingPathComponent("big.bin"))
        try Self.makeOld(server.documentRoot)
        try server.fixOwnership()
        let item = try await provider.item(for: ItemIdentifier("/big.bin"))
        XCTAssertEqual(item.size, Int64(size))
        let range: Range<Int64> = 1_000_003..<3_000_017
        let (path, fd) = try tempFile()
        defer { close(fd) }
        let got = try await provider.readContents(of: item, range: range, into: ContentSink(fd: fd))
        XCTAssertEqual(got, range)
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(written.count, Int(range.upperBound))
        XCTAssertEqual(written.subdata(in: Int(range.lowerBound)..<Int(range.upperBound)),
                       content.subdata(in: Int(range.lowerBound)..<Int(range.upperBound)))
        XCTAssertEqual(written.prefix(Int(range.lowerBound)), Data(count: Int(range.lowerBound)))
        let gets = server.accessLogLines { $0.contains { $0.hasPrefix("GET /files/big.bin ") } }
            .filter { $0.hasPrefix("GET /files/big.bin ") }
        XCTAssertEqual(gets, ["GET /files/big.bin 206 \(range.count) \"bytes=1000003-3000016\""])
    }

    func testReadPastTheEndGivesAnEmptyRange() async throws {
        let item = try await provider.item(for: ItemIdentifier("/a b"))
        let (_, fd) = try tempFile()
        defer { close(fd) }
        let got = try await provider.readContents(of: item, range: 1000..<2000, into: ContentSink(fd: fd))
        XCTAssertEqual(got, 1000..<1000)
    }

    func testChangedFileGivesVersionChanged() async throws {
        let id = ItemIdentifier("/a&b")
        let item = try await provider.item(for: id)
        XCTAssertFalse(item.version?.hasPrefix("W/") ?? true, "an old file has a strong ETag: \(item.version ?? "nil")")
        try Data("changed on the server, longer than before\n".utf8).write(to: server.documentRoot.appendingPathComponent("a&b"))
        let (_, fd) = try tempFile()
        defer { close(fd) }
        let error = await expectError(.versionChanged) {
            _ = try await self.provider.readContents(of: item, range: 0..<item.size, into: ContentSink(fd: fd))
        }
        XCTAssertEqual(error?.status, 412)
        XCTAssertEqual(error?.path, "/a&b")
        XCTAssertEqual(error?.detail, "GET failed: 412 Precondition Failed")
    }

    /// A file listed in its first second has a weak ETag, which If-Match cannot pin: the GET's
    /// own ETag then tells a change apart, also one that keeps the size (the bytes of two
    /// versions are never mixed).
    func testUnpinnedReadOfAChangedFileGivesVersionChanged() async throws {
        let id = ItemIdentifier("/a&b")
        let current = try await provider.item(for: id)
        let opaque = current.version.map { $0.hasPrefix("W/") ? String($0.dropFirst(2)) : $0 } ?? "\"x\""
        // The same tag, weak: read unpinned, and the answer's ETag agrees.
        var weak = current
        weak.version = "W/" + opaque
        let (_, fd) = try tempFile()
        defer { close(fd) }
        let got = try await provider.readContents(of: weak, range: 0..<weak.size, into: ContentSink(fd: fd))
        XCTAssertEqual(got, 0..<weak.size)
        // A weak tag of another version (same size): refused, not served.
        var other = current
        other.version = "W/\"\(weak.size)-0000000000000\""
        let error = await expectError(.versionChanged) {
            _ = try await self.provider.readContents(of: other, range: 0..<other.size, into: ContentSink(fd: fd))
        }
        XCTAssertTrue(error?.detail.contains("changed on the server") == true, error?.detail ?? "")
    }

    func testMissingItemsAreNotFound() async throws {
        let error = await expectError(.notFound) { _ = try await self.provider.item(for: ItemIdentifier("/no such")) }
        XCTAssertEqual(error?.status, 404)
        XCTAssertEqual(error?.path, "/no such")
        _ = await expectError(.notFound) { _ = try await self.provider.enumerateItems(in: ItemIdentifier("/no dir"), page: nil) }
        let ghost = Item(identifier: ItemIdentifier("/ghost?"), kind: .file, size: 10)
        let (_, fd) = try tempFile()
        defer { close(fd) }
        let readError = await expectError(.notFound) {
            _ = try await self.provider.readContents(of: ghost, range: 0..<10, into: ContentSink(fd: fd))
        }
        XCTAssertEqual(readError?.detail, "GET failed: 404 Not Found")
    }

    func testStoppedServerIsUnreachableQuickly() async throws {
        server.stop()
        let start = Date()
        let error = await expectError(.unreachable) { _ = try await self.provider.enumerateItems(in: .rootContainer, page: nil) }
        XCTAssertEqual(error?.path, "/")
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
    }

    func testQuotaDoesNotFail() async throws {
        // Apache's mod_dav_fs may or may not report RFC 4331 quota; either answer is fine.
        let quota = try await provider.quota()
        if let quota { XCTAssertTrue(quota.availableBytes != nil || quota.usedBytes != nil) }
    }
}

/// Basic and Digest login through the provider.
final class WebDAVAuthTests: XCTestCase {
    private func check(_ auth: ApacheServer.Auth, _ scheme: CurlCredentials.Scheme) async throws {
        let server = try ServerRequirement.apache(auth: auth)
        defer { server.remove() }
        try Data("x".utf8).write(to: server.documentRoot.appendingPathComponent("f.txt"))
        try server.start()
        let transport = CurlTransport()
        func provider(_ password: String) -> WebDAVProvider {
            WebDAVProvider(configuration: .init(baseURL: server.baseURL, remoteDescription: server.davURL,
                                                credentials: CurlCredentials(user: "alice", password: password, scheme: scheme)),
                           transport: transport)
        }
        let items = try await provider("pw1").enumerateAll(in: .rootContainer)
        XCTAssertEqual(items.map(\.name), ["f.txt"])
        do {
            _ = try await provider("wrong").enumerateItems(in: .rootContainer, page: nil)
            XCTFail("expected denied")
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, .denied)
            XCTAssertEqual(error.status, 401)
            XCTAssertEqual(error.remote, server.davURL)
        }
    }

    func testBasic() async throws { try await check(.basic(user: "alice", password: "pw1"), .basic) }
    func testDigest() async throws { try await check(.digest(user: "alice", password: "pw1"), .digest) }
    func testDigestWithAnyScheme() async throws { try await check(.digest(user: "alice", password: "pw1"), .any) }
}
