import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// `python3 -m http.server`: names only on the page, no ETags, Range and preconditions ignored.
final class HTTPIndexPythonTests: HTTPIndexTestCase {
    private var server: PythonHTTPServer!
    private var provider: HTTPIndexProvider!

    override func setUpWithError() throws {
        server = try HTTPIndexServers.python()
        try HTTPIndexFixture.seed(server.documentRoot)
        try server.start()
        remote = "http://127.0.0.1:\(server.port)/"
        provider = makeProvider(baseURL: server.baseURL, remote: remote)
    }

    override func tearDown() {
        provider = nil
        server?.remove()
        server = nil
        super.tearDown()
    }

    func testListsAwkwardNamesWithSizeAndMtimeVersions() async throws {
        let items = try await provider.enumerateAll(in: .rootContainer)
        let disk = try HTTPIndexFixture.diskListing(server.documentRoot)
        XCTAssertEqual(Set(items.map(\.name)), Set(disk.keys))
        for item in items {
            guard let truth = disk[item.name] else { continue }
            XCTAssertEqual(item.kind, truth.isFolder ? .folder : .file, item.name)
            XCTAssertEqual(item.size, truth.size, item.name)
            if item.kind == .file {
                XCTAssertEqual(item.modified ?? 0, truth.mtime, accuracy: 1, item.name)
                XCTAssertEqual(item.version, "size=\(truth.size);modified=\(Int64(truth.mtime))", item.name)
            }
            let again = try await provider.item(for: item.identifier)
            XCTAssertEqual(again, item, "item(for:) and the listing disagree on \(item.name)")
        }
        let folder = ItemIdentifier.rootContainer.child(HTTPIndexFixture.folderName)
        for name in HTTPIndexFixture.awkwardNames {
            let sub = try await provider.enumerateAll(in: folder.child("\(name) dir"))
            XCTAssertEqual(sub.map(\.name), [HTTPIndexFixture.innerName], name)
            let data = try await readAll(provider, sub[0])
            XCTAssertEqual(data, HTTPIndexFixture.content(name + HTTPIndexFixture.innerName), name)
        }
    }

    /// python answers a ranged GET with 200 and the whole file: written from 0, reported as such.
    func testServerIgnoringRangeWritesEverythingFromZero() async throws {
        let truth = try Data(contentsOf: server.documentRoot.appendingPathComponent(HTTPIndexFixture.bigName))
        let item = try await provider.item(for: .rootContainer.child(HTTPIndexFixture.bigName))
        let (got, data) = try await read(provider, item, 1000..<2000)
        XCTAssertEqual(got, 0..<Int64(truth.count))
        XCTAssertEqual(data, truth)
    }

    func testChangedFileGivesVersionChanged() async throws {
        let old = try await provider.item(for: .rootContainer.child("it's"))
        try DirectorySeeding.overwrite(server.documentRoot, "it's", with: Data("new".utf8))
        await expectError(.versionChanged, path: "/it's") { _ = try await self.read(self.provider, old, 0..<old.size) }
        // Same size, other mtime: still caught.
        let mid = try await provider.item(for: .rootContainer.child("it's"))
        try DirectorySeeding.overwrite(server.documentRoot, "it's", with: Data("NEW".utf8))
        await expectError(.versionChanged) { _ = try await self.read(self.provider, mid, 0..<3) }
    }

    func testMissingFolderAndFolderRedirect() async throws {
        await expectError(.notFound, path: "/nope") { _ = try await self.provider.enumerateAll(in: .rootContainer.child("nope")) }
        let folder = try await provider.item(for: .rootContainer.child("empty folder"))
        XCTAssertEqual(folder.kind, .folder, "/empty%20folder redirects to /empty%20folder/")
    }
}

/// nginx autoindex: exact sizes and minute dates on the page, strong ETags, If-Match honoured.
final class HTTPIndexNginxTests: HTTPIndexTestCase {
    private var server: NginxServer!

    override func setUpWithError() throws {
        server = try HTTPIndexServers.nginx()
        try HTTPIndexFixture.seed(server.documentRoot)
        try server.start()
        remote = "http://127.0.0.1:\(server.port)/files/"
    }

    override func tearDown() {
        server?.remove()
        server = nil
        super.tearDown()
    }

    /// `metadata=index`: one GET per folder, no HEADs; listing and item(for:) agree.
    func testIndexMetadataNeedsNoHeads() async throws {
        let provider = makeProvider(baseURL: server.baseURL, remote: remote, metadata: .index)
        XCTAssertEqual(provider.capabilities, [.rangedReads])
        let mark = server.accessLogLines().count
        let items = try await provider.enumerateAll(in: .rootContainer)
        // nginx writes its log line after the response is sent: wait for it.
        let deadline = Date().addingTimeInterval(5)
        while server.accessLogLines().count <= mark && Date() < deadline { usleep(20_000) }
        let requests = server.accessLogLines().dropFirst(mark)
        XCTAssertEqual(Array(requests), ["GET /files/ 200 \(requests.first?.split(separator: " ")[3] ?? "") \"-\""], "only the index page")
        let disk = try HTTPIndexFixture.diskListing(server.documentRoot)
        XCTAssertEqual(Set(items.map(\.name)), Set(disk.keys))
        for item in items {
            guard let truth = disk[item.name] else { continue }
            XCTAssertEqual(item.size, truth.size, item.name)
            if item.kind == .file {
                let minute = (truth.mtime / 60).rounded(.down) * 60
                XCTAssertEqual(item.modified, minute, item.name)
                XCTAssertEqual(item.version, "size=\(truth.size);modified=\(Int64(minute))")
            }
            let again = try await provider.item(for: item.identifier)
            XCTAssertEqual(again, item, "item(for:) and the listing disagree on \(item.name)")
        }
        let big = try XCTUnwrap(items.first { $0.name == HTTPIndexFixture.bigName })
        let (got, data) = try await read(provider, big, 4096..<8192)
        XCTAssertEqual(got, 4096..<8192)
        let truth = try Data(contentsOf: server.documentRoot.appendingPathComponent(HTTPIndexFixture.bigName))
        XCTAssertEqual(data.suffix(4096), truth.subdata(in: 4096..<8192))

        try DirectorySeeding.overwrite(server.documentRoot, HTTPIndexFixture.bigName, with: truth)
        await expectError(.versionChanged) { _ = try await self.read(provider, big, 0..<10) }
    }

    /// 5,000 files from nginx: `metadata=index` (one GET) against `metadata=head` (a GET and 5,000 HEADs).
    func testListingCost() async throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["FAVFS_MEASURE"] == "1", "a measurement: set FAVFS_MEASURE=1")
        let sizes = try HTTPIndexApacheTests.makeFiles(5_000, in: server.documentRoot.appendingPathComponent("many"))
        for metadata in [HTTPIndexMetadata.index, .head] {
            let provider = makeProvider(baseURL: server.baseURL, remote: remote, metadata: metadata)
            let mark = server.accessLogLines().count
            let start = Date()
            let items = try await provider.enumerateAll(in: .rootContainer.child("many"))
            let took = Date().timeIntervalSince(start)
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.size) }), sizes)
            print("COST nginx 5000 files, metadata=\(metadata.rawValue): \(String(format: "%.2f", took)) s, \(server.accessLogLines().count - mark) requests")
        }
    }

    /// With `autoindex_exact_size off` nginx rounds sizes above 9999 bytes: only those files get a HEAD.
    func testRoundedSizesAreLookedUp() async throws {
        let rounded = try HTTPIndexServers.nginx(exactSizes: false)
        defer { rounded.remove() }
        try HTTPIndexFixture.seed(rounded.documentRoot)
        try rounded.start()
        let provider = makeProvider(baseURL: rounded.baseURL, remote: remote, metadata: .index)
        let items = try await provider.enumerateAll(in: .rootContainer)
        XCTAssertEqual(items.first { $0.name == HTTPIndexFixture.bigName }?.size, Int64(HTTPIndexFixture.bigSize))
        let heads = rounded.accessLogLines().filter { $0.hasPrefix("HEAD") }
        XCTAssertEqual(heads, ["HEAD /files/\(HTTPIndexFixture.bigName) 200 0 \"-\""])
    }

    /// `metadata=head`: versions are nginx's strong ETags, reads are pinned with If-Match.
    func testHeadMetadataUsesETags() async throws {
        let provider = makeProvider(baseURL: server.baseURL, remote: remote)
        let items = try await provider.enumerateAll(in: .rootContainer)
        XCTAssertTrue(items.filter { !$0.isFolder }.allSatisfy { $0.version?.hasPrefix("\"") == true })
        let id = ItemIdentifier.rootContainer.child("semi;colon")
        let item = try await provider.item(for: id)
        let readBack = try await readAll(provider, item)
        XCTAssertEqual(readBack, HTTPIndexFixture.content("semi;colon"))
        try DirectorySeeding.overwrite(server.documentRoot, "semi;colon", with: Data("x".utf8))
        let error = await expectError(.versionChanged) { _ = try await self.read(provider, item, 0..<item.size) }
        XCTAssertEqual(error?.status, 412)
    }
}
