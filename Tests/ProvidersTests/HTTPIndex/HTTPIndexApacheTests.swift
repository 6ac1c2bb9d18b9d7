import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// The HTTP index provider against a real Apache mod_autoindex (FancyIndexing, HTMLTable: sizes on
/// the page are rounded, dates local and to the minute) with Basic auth, on loopback.
final class HTTPIndexApacheTests: HTTPIndexTestCase {
    static let user = "reader", password = "s3cret pass"
    private var server: ApacheServer!
    private var provider: HTTPIndexProvider!

    private var credentials: CurlCredentials { CurlCredentials(user: Self.user, password: Self.password) }

    override func setUpWithError() throws {
        server = try ServerRequirement.apache(auth: .basic(user: Self.user, password: Self.password))
        // ServerRequirement makes a WebDAV server; this suite needs the autoindex one.
        server.remove()
        server = try ApacheServer(auth: .basic(user: Self.user, password: Self.password), mode: .autoindex(fancy: true))
        try HTTPIndexFixture.seed(server.documentRoot)
        try server.start()
        remote = "http://\(Self.user)@127.0.0.1:\(server.port)/files/"
        provider = makeProvider(baseURL: server.baseURL, remote: remote, credentials: credentials)
    }

    override func tearDown() {
        provider = nil
        server?.remove()
        server = nil
        super.tearDown()
    }

    // MARK: listing

    func testListsAwkwardNamesWithExactSizesMtimesAndETags() async throws {
        let items = try await provider.enumerateAll(in: .rootContainer)
        let disk = try HTTPIndexFixture.diskListing(server.documentRoot)
        XCTAssertEqual(Set(items.map(\.name)), Set(disk.keys))
        for item in items {
            guard let truth = disk[item.name] else { continue }
            XCTAssertEqual(item.kind, truth.isFolder ? .folder : .file, item.name)
            XCTAssertEqual(item.size, truth.size, item.name)
            XCTAssertEqual(item.identifier, ItemIdentifier.rootContainer.child(item.name))
            if item.kind == .file {
                XCTAssertEqual(item.modified ?? 0, truth.mtime, accuracy: 1, item.name)
                XCTAssertTrue(item.version?.hasPrefix("\"") == true, "a strong ETag: \(item.version ?? "nil")")
            } else {
                XCTAssertNil(item.version)
            }
        }
        // The big file's page size is "293K": the item's size is the HEAD's exact one.
        XCTAssertEqual(items.first { $0.name == HTTPIndexFixture.bigName }?.size, Int64(HTTPIndexFixture.bigSize))

        let folder = ItemIdentifier.rootContainer.child(HTTPIndexFixture.folderName)
        let inner = try await provider.enumerateAll(in: folder)
        XCTAssertEqual(Set(inner.filter(\.isFolder).map(\.name)), Set(HTTPIndexFixture.awkwardNames.map { "\($0) dir" }))
        XCTAssertEqual(inner.filter { !$0.isFolder }.map(\.name), [HTTPIndexFixture.innerName])
        for name in HTTPIndexFixture.awkwardNames {
            let sub = try await provider.enumerateAll(in: folder.child("\(name) dir"))
            XCTAssertEqual(sub.map(\.name), [HTTPIndexFixture.innerName], name)
            XCTAssertEqual(sub.first?.size, Int64(HTTPIndexFixture.content(name + HTTPIndexFixture.innerName).count), name)
        }
        let empty = try await provider.enumerateAll(in: .rootContainer.child("empty folder"))
        XCTAssertEqual(empty.count, 0)
    }

    func testItemForMatchesListing() async throws {
        let items = try await provider.enumerateAll(in: .rootContainer)
        for listed in items {
            let got = try await provider.item(for: listed.identifier)
            XCTAssertEqual(got, listed, "item(for:) and the listing disagree on \(listed.name)")
        }
        let root = try await provider.item(for: .rootContainer)
        XCTAssertEqual(root.kind, .folder)
        let nested = ItemIdentifier.rootContainer.child(HTTPIndexFixture.folderName).child("tab\there dir").child(HTTPIndexFixture.innerName)
        let file = try await provider.item(for: nested)
        XCTAssertEqual(file.kind, .file)
        let readBack = try await readAll(provider, file)
        XCTAssertEqual(readBack, HTTPIndexFixture.content("tab\there" + HTTPIndexFixture.innerName))
    }

    func testReadsAwkwardNames() async throws {
        for name in HTTPIndexFixture.awkwardNames {
            let item = try await provider.item(for: .rootContainer.child(name))
            let data = try await readAll(provider, item)
            XCTAssertEqual(data, HTTPIndexFixture.content(name), name)
        }
        let empty = try await provider.item(for: .rootContainer.child("empty"))
        XCTAssertEqual(empty.size, 0)
        let readBack = try await readAll(provider, empty)
        XCTAssertEqual(readBack, Data())
    }

    func testRangedReadsLandAtTheirOffsets() async throws {
        let truth = try Data(contentsOf: server.documentRoot.appendingPathComponent(HTTPIndexFixture.bigName))
        let item = try await provider.item(for: .rootContainer.child(HTTPIndexFixture.bigName))
        let size = Int64(truth.count)
        for range: Range<Int64> in [0..<4096, 100_000..<165_536, (size - 10)..<size, (size - 10)..<(size + 5000), 7..<8] {
            let (got, data) = try await read(provider, item, range)
            let expected = range.clamped(to: 0..<size)
            XCTAssertEqual(got, expected, "\(range)")
            XCTAssertEqual(Int64(data.count), expected.upperBound, "the sparse file ends at the range's end")
            XCTAssertEqual(data.subdata(in: Int(expected.lowerBound)..<Int(expected.upperBound)),
                           truth.subdata(in: Int(expected.lowerBound)..<Int(expected.upperBound)), "\(range)")
        }
        let (pastEOF, _) = try await read(provider, item, (size + 10)..<(size + 20))
        XCTAssertTrue(pastEOF.isEmpty, "a range past the end writes nothing: \(pastEOF)")
        let isRanged = { (line: String) in line.hasPrefix("GET /files/\(HTTPIndexFixture.bigName) 206") }
        let ranged = server.accessLogLines { $0.filter(isRanged).count >= 5 }.filter(isRanged)
        XCTAssertGreaterThanOrEqual(ranged.count, 5, "ranged GETs answered 206: \(server.accessLogLines().suffix(10))")
    }

    func testChangedFileGivesVersionChanged() async throws {
        let id = ItemIdentifier.rootContainer.child("a b")
        let old = try await provider.item(for: id)
        try DirectorySeeding.overwrite(server.documentRoot, "a b", with: Data("changed, and longer than before\n".utf8))
        try server.fixOwnership()
        let error = await expectError(.versionChanged, path: "/a b") { _ = try await self.read(self.provider, old, 0..<old.size) }
        XCTAssertEqual(error?.status, 412)
        let fresh = try await provider.item(for: id)
        XCTAssertNotEqual(fresh.version, old.version)
        let readBack = try await readAll(provider, fresh)
        XCTAssertEqual(readBack, Data("changed, and longer than before\n".utf8))
    }

    func testLists1050FilesWithExactSizes() async throws {
        let folder = server.documentRoot.appendingPathComponent("many")
        let sizes = try Self.makeFiles(1_050, in: folder)
        try server.fixOwnership()
        let mark = server.accessLogLines().count
        let start = Date()
        let items = try await provider.enumerateAll(in: .rootContainer.child("many"))
        let took = Date().timeIntervalSince(start)
        XCTAssertEqual(items.count, 1_050)
        let got = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.size) })
        XCTAssertEqual(got, sizes, "every size exact")
        XCTAssertTrue(items.allSatisfy { $0.version?.hasPrefix("\"") == true })
        let lines = server.accessLogLines().dropFirst(mark)
        print("listed 1,050 files in \(String(format: "%.2f", took)) s: \(lines.filter { $0.hasPrefix("HEAD") }.count) HEADs, \(lines.filter { $0.hasPrefix("GET") }.count) GETs, \(lines.count) requests in all")
    }

    /// The cost of HEAD metadata: 1,000 and 5,000 files, 8 HEADs in flight (and 1 and 16, to
    /// compare). A measurement (about a minute, mostly making the files): FAVFS_MEASURE=1 runs it.
    func testListingCost() async throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["FAVFS_MEASURE"] == "1", "a measurement: set FAVFS_MEASURE=1")
        for count in [1_000, 5_000] {
            let name = "cost\(count)"
            let sizes = try Self.makeFiles(count, in: server.documentRoot.appendingPathComponent(name))
            try server.fixOwnership()
            for concurrency in count == 1_000 ? [1, 8, 16] : [8] {
                let p = makeProvider(baseURL: server.baseURL, remote: remote, credentials: credentials, headConcurrency: concurrency)
                let mark = server.accessLogLines().count
                let start = Date()
                let items = try await p.enumerateAll(in: .rootContainer.child(name))
                let took = Date().timeIntervalSince(start)
                XCTAssertEqual(items.count, count)
                XCTAssertEqual(Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.size) }), sizes)
                let lines = server.accessLogLines().dropFirst(mark)
                let page = lines.first { $0.hasPrefix("GET /files/\(name)/ 200") }.map { $0.split(separator: " ")[3] } ?? "?"
                print("COST \(count) files, \(concurrency) in flight: \(String(format: "%.2f", took)) s, \(lines.count) requests (index page \(page) bytes), \(String(format: "%.0f", Double(count) / took)) files/s")
            }
        }
    }

    // MARK: errors

    func testWrongPasswordIsDenied() async throws {
        let wrong = makeProvider(baseURL: server.baseURL, remote: remote, credentials: CurlCredentials(user: Self.user, password: "wrong"))
        let error = await expectError(.denied, path: "/") { _ = try await wrong.enumerateAll(in: .rootContainer) }
        XCTAssertEqual(error?.status, 401)
        XCTAssertTrue(error?.description.contains("401") == true, "\(String(describing: error))")
        await expectError(.denied) { _ = try await wrong.item(for: .rootContainer.child("a b")) }
        let none = makeProvider(baseURL: server.baseURL, remote: remote)
        await expectError(.denied) { _ = try await none.enumerateAll(in: .rootContainer) }
    }

    func testDigestAuth() async throws {
        let digest = try ApacheServer(auth: .digest(user: Self.user, password: Self.password), mode: .autoindex(fancy: false))
        defer { digest.remove() }
        try HTTPIndexFixture.seed(digest.documentRoot)
        try digest.start()
        let p = makeProvider(baseURL: digest.baseURL, remote: remote, credentials: credentials)
        let items = try await p.enumerateAll(in: .rootContainer)
        XCTAssertEqual(Set(items.map(\.name)), Set(try HTTPIndexFixture.diskListing(digest.documentRoot).keys))
        let item = try await p.item(for: .rootContainer.child("a&b"))
        let readBack = try await readAll(p, item)
        XCTAssertEqual(readBack, HTTPIndexFixture.content("a&b"))
    }

    func testMissingFolderAndFileAreNotFound() async throws {
        let error = await expectError(.notFound, path: "/no such folder") {
            _ = try await self.provider.enumerateAll(in: .rootContainer.child("no such folder"))
        }
        XCTAssertEqual(error?.status, 404)
        await expectError(.notFound, path: "/nope.txt") { _ = try await self.provider.item(for: .rootContainer.child("nope.txt")) }
        let ghost = Item(identifier: .rootContainer.child("ghost"), kind: .file, size: 10)
        await expectError(.notFound) { _ = try await self.read(self.provider, ghost, 0..<10) }
    }

    /// A folder Apache may not read answers 403: denied, with a message that says so.
    func testFolderWithoutIndexIsDenied() async throws {
        let closed = server.documentRoot.appendingPathComponent("closed")
        try FileManager.default.createDirectory(at: closed, withIntermediateDirectories: true)
        try server.fixOwnership()
        chmod(closed.path, 0o311)
        let error = await expectError(.denied, path: "/closed") { _ = try await self.provider.enumerateAll(in: .rootContainer.child("closed")) }
        XCTAssertEqual(error?.status, 403)
        XCTAssertTrue(error?.detail.contains("index") == true, "\(String(describing: error))")
    }

    func testListingAFileIsNotAFolder() async throws {
        await expectError(.notFound) { _ = try await self.provider.enumerateAll(in: .rootContainer.child("a b")) }
    }

    func testServerDownIsUnreachable() async throws {
        let port = try FreePort.next()
        let down = makeProvider(baseURL: "http://127.0.0.1:\(port)/files/", remote: remote, credentials: credentials)
        let error = await expectError(.unreachable, path: "/") { _ = try await down.enumerateAll(in: .rootContainer) }
        XCTAssertTrue(error?.detail.contains("GET") == true, "\(String(describing: error))")
        await expectError(.unreachable) { _ = try await down.item(for: .rootContainer.child("x")) }
    }

    func testFactoryMakesTheProvider() async throws {
        let url = try RemoteURL("http://\(Self.user)@127.0.0.1:\(server.port)/files/\(HTTPIndexFixture.folderName.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(.init(charactersIn: "?#")))!)/")
        let p = try ProviderFactory.make(RemoteConfiguration(url: url, secret: Self.password), transport: TransportOptions())
        XCTAssertFalse(p is any WritableProvider, "read-only")
        XCTAssertEqual(p.capabilities, [.rangedReads, .versions])
        let items = try await p.enumerateAll(in: .rootContainer)
        XCTAssertEqual(items.filter { !$0.isFolder }.map(\.name), [HTTPIndexFixture.innerName])
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: url, options: ["bogus": "1"]), transport: TransportOptions()))
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: url, options: ["metadata": "guess"]), transport: TransportOptions()))
    }

    /// `count` files of varied sizes (so Apache shows "1.2K", "14K"...) → name → size.
    static func makeFiles(_ count: Int, in folder: URL) throws -> [String: Int64] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var sizes: [String: Int64] = [:]
        let block = Data(repeating: 0x61, count: 20_000)
        for i in 0..<count {
            let name = String(format: "file %05d.txt", i)
            let size = (i * 7_919) % 20_000
            try block.prefix(size).write(to: folder.appendingPathComponent(name))
            sizes[name] = Int64(size)
        }
        try HTTPIndexFixture.backdate(folder)
        return sizes
    }
}
