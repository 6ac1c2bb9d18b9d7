import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// The S3 provider's read side against moto with signatures enforced: listings and paging,
/// metadata, ranged reads pinned to the ETag, awkward keys, errors.
final class S3ProviderTests: XCTestCase {
    static let awkwardNames = ["a b", "ünïcödé ☃", "#hash", "100%", "what?", "a+b", "it's", "a&b", "semi;colon",
                               "co:lon", "tab\there", "trailing dots..."]

    func testListingFilesFoldersMarkersAndMissing() async throws {
        let f = try S3Fixture("list")
        try f.seed(["a.txt": "hello", "dir/inner.txt": "in", "empty.txt": ""], folders: ["empty", "dir"])
        let p = try f.provider()
        let root = try await p.enumerateAll(in: .rootContainer).sorted { $0.name < $1.name }
        XCTAssertEqual(root.map(\.name), ["a.txt", "dir", "empty", "empty.txt"])
        XCTAssertEqual(root.map(\.kind), [.file, .folder, .folder, .file])
        XCTAssertEqual(root[0].size, 5)
        XCTAssertEqual(root[3].size, 0)
        XCTAssertNotNil(root[0].version)
        XCTAssertEqual(root[0].modified ?? 0, Date().timeIntervalSince1970, accuracy: 120)
        // The folder's own marker is not listed as a child.
        let dir = try await p.enumerateAll(in: ItemIdentifier("/dir"))
        XCTAssertEqual(dir.map(\.identifier.rawValue), ["/dir/inner.txt"])
        let empty = try await p.enumerateAll(in: ItemIdentifier("/empty"))
        XCTAssertEqual(empty.count, 0)
        await s3AssertError(.notFound) { try await p.enumerateItems(in: ItemIdentifier("/missing"), page: nil) }
        await s3AssertError(.notAFolder) { try await p.enumerateItems(in: ItemIdentifier("/a.txt"), page: nil) }
    }

    func testPagingTenThousandKeys() async throws {
        let f = try S3Fixture("page10k")
        try f.server.seedMany(prefix: f.key("many/f"), count: 10_000)
        let p = try f.provider(["max_keys": "1000"])
        var names = Set<String>()
        var pages = 0
        var page: Page? = nil
        repeat {
            let result = try await p.enumerateItems(in: ItemIdentifier("/many"), page: page)
            pages += 1
            XCTAssertLessThanOrEqual(result.items.count, 1000)
            names.formUnion(result.items.map(\.name))
            page = result.nextPage
        } while page != nil
        XCTAssertEqual(names.count, 10_000)
        XCTAssertTrue(names.contains("f00000") && names.contains("f09999"))
        XCTAssertEqual(pages, 10)
    }

    func testPagingThousandFiftyKeysInPagesOfHundred() async throws {
        let f = try S3Fixture("page1050")
        try f.server.seedMany(prefix: f.key("f"), count: 1050)
        try f.seed([:], folders: ["sub"])
        let p = try f.provider(["max_keys": "100"])
        var pages = 0
        var items: [Item] = []
        var page: Page? = nil
        repeat {
            let result = try await p.enumerateItems(in: .rootContainer, page: page)
            pages += 1
            items += result.items
            page = result.nextPage
        } while page != nil
        XCTAssertEqual(items.count, 1051)
        XCTAssertEqual(Set(items.map(\.name)).count, 1051)
        XCTAssertEqual(items.filter(\.isFolder).map(\.name), ["sub"])
        XCTAssertEqual(pages, 11)
    }

    func testItemForFileFolderImplicitFolderAndMissing() async throws {
        let f = try S3Fixture("item")
        try f.seed(["a.txt": "hello", "implicit/x.txt": "x"], folders: ["marked"])
        let p = try f.provider()
        let file = try await p.item(for: ItemIdentifier("/a.txt"))
        XCTAssertEqual(file.kind, .file)
        XCTAssertEqual(file.size, 5)
        // The version is the same whether it comes from a listing or a HEAD; mtimes too (floored).
        let listed = try await p.enumerateAll(in: .rootContainer).first { $0.name == "a.txt" }
        XCTAssertEqual(file.version, listed?.version)
        XCTAssertEqual(file.modified, listed?.modified)
        let marked = try await p.item(for: ItemIdentifier("/marked"))
        XCTAssertEqual(marked.kind, .folder)
        let implicit = try await p.item(for: ItemIdentifier("/implicit"))
        XCTAssertEqual(implicit.kind, .folder)
        let root = try await p.item(for: .rootContainer)
        XCTAssertEqual(root.kind, .folder)
        await s3AssertError(.notFound) { try await p.item(for: ItemIdentifier("/nope")) }
    }

    func testRangedReads() async throws {
        let f = try S3Fixture("read")
        let bytes = (0..<1000).map { UInt8($0 % 251) }
        try f.server.seed(files: [f.key("data.bin"): Data(bytes), f.key("empty.bin"): Data()])
        let p = try f.provider()
        let item = try await p.item(for: ItemIdentifier("/data.bin"))

        let (sink, contents) = try f.sink()
        var got = try await p.readContents(of: item, range: 0..<100, into: sink)
        XCTAssertEqual(got, 0..<100)
        got = try await p.readContents(of: item, range: 500..<600, into: sink)
        XCTAssertEqual(got, 500..<600)
        got = try await p.readContents(of: item, range: 950..<1000, into: sink)
        XCTAssertEqual(got, 950..<1000)
        // Past the end: clipped.
        got = try await p.readContents(of: item, range: 990..<2000, into: sink)
        XCTAssertEqual(got, 990..<1000)
        got = try await p.readContents(of: item, range: 1000..<1100, into: sink)
        XCTAssertTrue(got.isEmpty)
        let data = contents()
        XCTAssertEqual(data.count, 1000)
        XCTAssertEqual(Array(data[0..<100]), Array(bytes[0..<100]))
        XCTAssertEqual(Array(data[500..<600]), Array(bytes[500..<600]))
        XCTAssertEqual(Array(data[950..<1000]), Array(bytes[950..<1000]))
        XCTAssertTrue(data[100..<500].allSatisfy { $0 == 0 }, "bytes land at their own offset only")

        let (whole, wholeContents) = try f.sink()
        got = try await p.readContents(of: item, range: 0..<1000, into: whole)
        XCTAssertEqual(got, 0..<1000)
        XCTAssertEqual(wholeContents(), Data(bytes))

        let empty = try await p.item(for: ItemIdentifier("/empty.bin"))
        XCTAssertEqual(empty.size, 0)
        let (emptySink, emptyContents) = try f.sink()
        got = try await p.readContents(of: empty, range: 0..<4096, into: emptySink)
        XCTAssertTrue(got.isEmpty)
        XCTAssertEqual(emptyContents().count, 0)
    }

    func testReadPinnedToVersionDetectsChange() async throws {
        let f = try S3Fixture("pinned")
        try f.seed(["v.txt": "version one"])
        let p = try f.provider()
        let item = try await p.item(for: ItemIdentifier("/v.txt"))
        let (sink, _) = try f.sink()
        _ = try await p.readContents(of: item, range: 0..<4, into: sink)
        try f.server.put(f.key("v.txt"), Data("version two!".utf8))
        let error = await s3AssertError(.versionChanged) { try await p.readContents(of: item, range: 4..<8, into: sink) }
        XCTAssertEqual(error?.status, 412)
        // Unpinned, the new content reads.
        var fresh = item
        fresh.version = nil
        let (sink2, contents2) = try f.sink()
        _ = try await p.readContents(of: fresh, range: 0..<12, into: sink2)
        XCTAssertEqual(String(decoding: contents2(), as: UTF8.self), "version two!")
    }

    func testAwkwardNamesAsFilesAndFolders() async throws {
        let f = try S3Fixture("awkward")
        var files: [String: String] = [:]
        for name in Self.awkwardNames {
            files["files/\(name)"] = "content of \(name)"
            files["dirs/\(name)/inside.txt"] = "inside \(name)"
        }
        try f.seed(files, folders: Self.awkwardNames.map { "dirs/\($0)" })
        let p = try f.provider()
        let listedFiles = try await p.enumerateAll(in: ItemIdentifier("/files"))
        XCTAssertEqual(Set(listedFiles.map(\.name)), Set(Self.awkwardNames))
        let listedDirs = try await p.enumerateAll(in: ItemIdentifier("/dirs"))
        XCTAssertEqual(Set(listedDirs.map(\.name)), Set(Self.awkwardNames))
        XCTAssertTrue(listedDirs.allSatisfy(\.isFolder))
        for name in Self.awkwardNames {
            let file = try await p.item(for: ItemIdentifier("/files").child(name))
            XCTAssertEqual(file.size, Int64("content of \(name)".utf8.count), name)
            let (sink, contents) = try f.sink()
            _ = try await p.readContents(of: file, range: 0..<file.size, into: sink)
            XCTAssertEqual(String(decoding: contents(), as: UTF8.self), "content of \(name)")
            let dir = ItemIdentifier("/dirs").child(name)
            let folder = try await p.item(for: dir)
            XCTAssertEqual(folder.kind, .folder, name)
            let inside = try await p.enumerateAll(in: dir)
            XCTAssertEqual(inside.map(\.name), ["inside.txt"], name)

            // Written through the provider (read back by boto3 below).
            let written = ItemIdentifier("/written").child(name)
            if name == Self.awkwardNames.first { _ = try await p.createFolder(ItemIdentifier("/written")) }
            _ = try await p.upload(written, from: f.source(Data("new \(name)".utf8)), precondition: .mustNotExist)
            _ = try await p.createFolder(ItemIdentifier("/written").child(name + " dir"))
        }
        let served = try f.server.get(Self.awkwardNames.flatMap { [f.key("written/\($0)"), f.key("written/\($0) dir/")] })
        for name in Self.awkwardNames {
            XCTAssertEqual(served[f.key("written/\(name)")], Data("new \(name)".utf8), name)
            XCTAssertEqual(served[f.key("written/\(name) dir/")], Data(), "the folder's marker: \(name)")
        }
    }

    func testWrongCredentialsAreDeniedAndSayWhich() async throws {
        let f = try S3Fixture("denied")
        try f.seed(["a.txt": "x"])
        let wrongSecret = try f.provider(secret: "definitely-wrong-secret")
        let e1 = await s3AssertError(.denied) { try await wrongSecret.enumerateItems(in: .rootContainer, page: nil) }
        XCTAssertEqual(e1?.status, 403)
        XCTAssertTrue(e1?.detail.contains("SignatureDoesNotMatch") ?? false, "\(String(describing: e1))")
        XCTAssertFalse("\(String(describing: e1))".contains("definitely-wrong-secret"))
        XCTAssertTrue(e1?.remote.hasPrefix("s3://") ?? false)
        await s3AssertError(.denied) { try await wrongSecret.item(for: ItemIdentifier("/a.txt")) }

        let wrongKey = try f.provider(["access_key_id": "AKIAUNKNOWN000000000"])
        let e2 = await s3AssertError(.denied) { try await wrongKey.enumerateItems(in: .rootContainer, page: nil) }
        XCTAssertTrue(e2?.detail.contains("InvalidAccessKeyId") ?? false, "\(String(describing: e2))")

        // Unsigned requests are refused too: moto really checks.
        let anonymousConfig = try S3Provider.configuration(
            from: RemoteConfiguration(url: try RemoteURL("s3://\(f.server.bucket)/\(f.prefix)"), options: ["endpoint": f.server.endpoint]),
            environment: [:], home: "/nonexistent")
        XCTAssertNil(anonymousConfig.credentials)
        let anonymous = S3Provider(configuration: anonymousConfig, transport: CurlTransport())
        // Real S3 answers 403 AccessDenied; moto 5 fails with 500 on a request without an
        // Authorization header (KeyError). Either way nothing is served.
        do {
            _ = try await anonymous.enumerateItems(in: .rootContainer, page: nil)
            XCTFail("an unsigned listing succeeded: moto does not check signatures")
        } catch let error as ProviderError {
            XCTAssertTrue([.denied, .serverError].contains(error.kind), "\(error)")
        }
    }

    func testServerDownIsUnreachable() async throws {
        let f = try S3Fixture("down")
        let p = try f.provider(["endpoint": "http://127.0.0.1:\(try FreePort.next())"])
        let error = await s3AssertError(.unreachable) { try await p.enumerateItems(in: .rootContainer, page: nil) }
        XCTAssertTrue(error?.remote.hasPrefix("s3://") ?? false)
        await s3AssertError(.unreachable) { try await p.item(for: ItemIdentifier("/x")) }
    }

    func testMissingBucketIsNotFound() async throws {
        let f = try S3Fixture("nobucket")
        let config = RemoteConfiguration(url: try RemoteURL("s3://no-such-bucket-here/"),
                                         options: ["endpoint": f.server.endpoint, "access_key_id": f.server.accessKeyId],
                                         secret: f.server.secretAccessKey)
        let p = try XCTUnwrap(ProviderFactory.make(config) as? S3Provider)
        let error = await s3AssertError(.notFound) { try await p.enumerateItems(in: .rootContainer, page: nil) }
        XCTAssertTrue(error?.detail.contains("NoSuchBucket") ?? false, "\(String(describing: error))")
    }
}

/// The conformance server for S3 keeps its contract (the suite itself lives elsewhere).
final class S3ConformanceServerTests: XCTestCase {
    func testContract() async throws {
        guard MotoServer.isAvailable || TestEnvironment.isCI else { throw XCTSkip("moto is not installed") }
        let server = S3ConformanceServer.shared
        try server.start()
        try server.start()  // idempotent
        let base = "contract-\(UUID().uuidString.prefix(8))"
        try server.seed(files: ["\(base)/a b.txt": Data("one".utf8), "\(base)/sub/x": Data("x".utf8)], folders: ["\(base)/empty"])
        XCTAssertTrue(try server.exists("\(base)/a b.txt"))
        XCTAssertTrue(try server.exists("\(base)/empty"))
        XCTAssertTrue(try server.exists("\(base)/sub"))
        XCTAssertFalse(try server.exists("\(base)/nope"))
        XCTAssertEqual(try server.contents(of: "\(base)/a b.txt"), Data("one".utf8))
        XCTAssertNil(try server.contents(of: "\(base)/nope"))

        func provider(_ r: ConformanceRemote) throws -> any Provider {
            try ProviderFactory.make(RemoteConfiguration(url: try RemoteURL(r.urlWithOptions), secret: r.secret))
        }
        let p = try provider(server.remote())
        let folder = ItemIdentifier("/" + base)
        let listed = try await p.enumerateAll(in: folder).map(\.name).sorted()
        XCTAssertEqual(listed, ["a b.txt", "empty", "sub"])
        let before = try await p.item(for: folder.child("a b.txt"))
        try server.overwrite("\(base)/a b.txt", with: Data("two!".utf8))
        let after = try await p.item(for: folder.child("a b.txt"))
        XCTAssertNotEqual(before.version, after.version)

        let paged = try provider({ var r = server.remote(); r.options[server.traits.pageSizeOption!] = "1"; return r }())
        let all = try await paged.enumerateAll(in: folder)
        XCTAssertEqual(all.count, 3)

        do {
            _ = try await provider(server.remoteWithWrongCredentials()!).enumerateItems(in: folder, page: nil)
            XCTFail("wrong credentials listed")
        } catch let error as ProviderError { XCTAssertEqual(error.kind, .denied, "\(error)") }
        do {
            _ = try await provider(try server.remoteThatIsDown()!).enumerateItems(in: folder, page: nil)
            XCTFail("a server that is down listed")
        } catch let error as ProviderError { XCTAssertEqual(error.kind, .unreachable, "\(error)") }
    }
}
