import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// The Favart provider's write side (POST /file, POST /media, DELETE /media) against the fixture.
final class FavartWritingTests: XCTestCase {
    private var server: FavartServer!
    private var provider: FavartProvider!
    private var temp = FavartTempFiles()

    override func setUpWithError() throws {
        server = try FavartServer.started()
        try FavartTesting.seed(server, files: [
            "old.jpg": Data("old content\n".utf8),
            "dir/inner.jpg": Data("inside\n".utf8),
            "hidden/notes.txt": Data("not listed\n".utf8),
        ], folders: ["empty"])
        provider = FavartTesting.provider(server)
    }

    override func tearDown() {
        provider = nil
        server?.remove()
        server = nil
        temp = FavartTempFiles()
    }

    private func upload(_ path: String, _ data: Data, _ precondition: UploadPrecondition) async throws -> Item {
        try await provider.upload(ItemIdentifier(path), from: temp.source(data), precondition: precondition)
    }

    private func expect(_ kind: ProviderError.Kind, _ what: String, _ body: () async throws -> Void) async {
        do {
            try await body()
            XCTFail("\(what): no error, expected \(kind)")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, kind, "\(what): \(e)")
        } catch {
            XCTFail("\(what): \(error)")
        }
    }

    /// Requests the server logged for a name (its encoded form appears in the request line).
    private func requests(mentioning encodedName: String) -> [String] {
        server.log().split(separator: "\n").map(String.init).filter { $0.contains(encodedName) }
    }

    // MARK: upload

    func testUploadCreatesAndVersionsAgreeEverywhere() async throws {
        let data = FavartTesting.bytes(5 * 1024 * 1024 + 17)  // streamed from the fd, more than one curl buffer
        let created = try await upload("/dir/new.jpg", data, .mustNotExist)
        XCTAssertEqual(FavartTesting.served(server, "dir/new.jpg"), data)
        XCTAssertEqual(created, Item(identifier: ItemIdentifier("/dir/new.jpg"), kind: .file, size: Int64(data.count),
                                     version: "size:\(data.count)"))
        // The hard requirement: the same version from the upload, the listing and item(for:).
        let listed = try await provider.enumerateAll(in: ItemIdentifier("/dir")).first { $0.name == "new.jpg" }
        let single = try await provider.item(for: ItemIdentifier("/dir/new.jpg"))
        XCTAssertEqual(listed, created)
        XCTAssertEqual(single, created)
    }

    /// The transport's fd upload with method POST: a raw body with Content-Length, no form
    /// Content-Type (the fixture refuses forms on POST /file), bytes intact.
    func testTransportUploadsARawBodyWithPOST() async throws {
        let data = FavartTesting.bytes(300_000, seed: 9)
        let response = try await CurlTransport().upload(CurlRequest(method: "POST", url: server.httpURL + "/file?path=dir&id=raw.jpg"),
                                                        from: temp.source(data).fd, length: Int64(data.count))
        XCTAssertEqual(response.status, 201, String(decoding: response.body, as: UTF8.self))
        XCTAssertEqual(FavartTesting.served(server, "dir/raw.jpg"), data)
        let form = try await CurlTransport().perform(CurlRequest(method: "POST", url: server.httpURL + "/file?path=dir&id=form.jpg",
                                                                 headers: [CurlHeader("Content-Type", "application/x-www-form-urlencoded")],
                                                                 body: Data("a=b".utf8)))
        XCTAssertEqual(form.status, 400, "the fixture refuses a form body")
    }

    func testUploadPreconditions() async throws {
        let old = try await provider.item(for: ItemIdentifier("/old.jpg"))
        await expect(.exists, "mustNotExist on an existing file") {
            _ = try await self.upload("/old.jpg", Data("x".utf8), .mustNotExist)
        }
        // A folder's name is no image name: refused by the name, before any request.
        await expect(.notSupported, "upload onto a folder") {
            _ = try await self.upload("/dir", Data("x".utf8), .mustNotExist)
        }
        XCTAssertEqual(FavartTesting.served(server, "old.jpg"), Data("old content\n".utf8), "nothing overwritten")

        let replaced = try await upload("/old.jpg", Data("new, longer content\n".utf8), .mustMatch(old.version!))
        XCTAssertEqual(FavartTesting.served(server, "old.jpg"), Data("new, longer content\n".utf8))
        XCTAssertNotEqual(replaced.version, old.version)

        await expect(.versionChanged, "mustMatch with a stale version") {
            _ = try await self.upload("/old.jpg", Data("stale writer".utf8), .mustMatch(old.version!))
        }
        XCTAssertEqual(FavartTesting.served(server, "old.jpg"), Data("new, longer content\n".utf8), "no overwrite on a conflict")

        await expect(.versionChanged, "mustMatch on a file that is gone") {
            _ = try await self.upload("/gone.jpg", Data("x".utf8), .mustMatch("size:1"))
        }
        XCTAssertNil(FavartTesting.served(server, "gone.jpg"))

        _ = try await upload("/old.jpg", Data("blind".utf8), .none)
        XCTAssertEqual(FavartTesting.served(server, "old.jpg"), Data("blind".utf8))
    }

    func testUploadIntoAMissingFolderIsNotFound() async throws {
        await expect(.notFound, "upload into a missing folder") {
            _ = try await self.upload("/nope/a.jpg", Data("x".utf8), .mustNotExist)
        }
        await expect(.notFound, "upload into a missing folder without a precondition") {
            _ = try await self.upload("/nope/a.jpg", Data("x".utf8), .none)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.root.appendingPathComponent("nope").path))
    }

    func testUploadOfANameTheAPIWouldNotListIsRefusedBeforeSending() async throws {
        do {
            _ = try await upload("/notes.txt", Data("text".utf8), .mustNotExist)
            XCTFail("stored a file the API would never list")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .notSupported)
            XCTAssertTrue(e.detail.contains("only .jpg/.jpeg/.png"), e.detail)
        }
        XCTAssertEqual(requests(mentioning: "notes.txt"), [], "nothing sent")
        XCTAssertNil(FavartTesting.served(server, "notes.txt"))
    }

    func testTooLargeIsRefusedWithNothingSentAndTheLimitItselfWorks() async throws {
        let limit = Int(FavartProvider.maxUploadSize)
        do {
            _ = try await upload("/big.jpg", Data(count: limit + 1), .none)
            XCTFail("uploaded more than 25 MiB")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .tooLarge)
            XCTAssertTrue(e.detail.contains("25 MiB"), e.detail)
        }
        XCTAssertEqual(requests(mentioning: "big.jpg"), [], "nothing sent")
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.root.appendingPathComponent("big.jpg").path))

        let exact = try await upload("/exact.jpg", Data(repeating: 7, count: limit), .mustNotExist)
        XCTAssertEqual(exact.size, Int64(limit))
        let attributes = try FileManager.default.attributesOfItem(atPath: server.root.appendingPathComponent("exact.jpg").path)
        XCTAssertEqual(attributes[.size] as? Int, limit)
    }

    func testUploadReadsBackAfterASameSizeEditOfItsOwn() async throws {
        // A read pins Last-Modified; our own upload of the same size must not look like a change.
        let item = try await provider.item(for: ItemIdentifier("/old.jpg"))
        _ = try await provider.readContents(of: item, range: 0..<12, into: try temp.sink())
        let same = try await upload("/old.jpg", Data("OLD CONTENT\n".utf8), .mustMatch(item.version!))
        XCTAssertEqual(same.version, item.version, "same size, same version (the documented precision)")
        let sink = try temp.sink()
        _ = try await provider.readContents(of: same, range: 0..<12, into: sink)
        XCTAssertEqual(temp.read(sink, 0..<12), Data("OLD CONTENT\n".utf8))
    }

    func testAwkwardNamesAreWrittenAndReadBack() async throws {
        for name in TreeGenerator.awkwardNames {
            let folder = try await provider.createFolder(ItemIdentifier("/\(name)"))
            XCTAssertEqual(folder.kind, .folder)
            let file = folder.identifier.child("\(name).jpg")
            let data = Data("content of \(name)".utf8)
            let uploaded = try await upload(file.rawValue, data, .mustNotExist)
            XCTAssertEqual(FavartTesting.served(server, "\(name)/\(name).jpg"), data, name)
            let listed = try await provider.enumerateAll(in: folder.identifier)
            XCTAssertEqual(listed, [uploaded], name)
            let sink = try temp.sink()
            let n = try await provider.readContents(of: uploaded, range: 0..<uploaded.size, into: sink)
            XCTAssertEqual(temp.read(sink, n), data, name)
        }
        let root = try await provider.enumerateAll(in: .rootContainer).map(\.name)
        for name in TreeGenerator.awkwardNames { XCTAssertTrue(root.contains(name), name) }
    }

    // MARK: folders

    func testCreateFolder() async throws {
        let made = try await provider.createFolder(ItemIdentifier("/dir/made"))
        XCTAssertEqual(made, Item(identifier: ItemIdentifier("/dir/made"), kind: .folder))
        let listed = try await provider.item(for: ItemIdentifier("/dir/made"))
        XCTAssertEqual(listed, made)
        await expect(.exists, "an existing folder") { _ = try await self.provider.createFolder(ItemIdentifier("/dir/made")) }
        // Every listed file has an image name, which no folder may have.
        await expect(.notSupported, "over an existing file") { _ = try await self.provider.createFolder(ItemIdentifier("/old.jpg")) }
        // The API's mkdir is mkdir -p: favfs must not create missing parents on the way.
        await expect(.notFound, "a missing parent") { _ = try await self.provider.createFolder(ItemIdentifier("/a/b")) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.root.appendingPathComponent("a").path))
        await expect(.notSupported, "a folder named like an image") { _ = try await self.provider.createFolder(ItemIdentifier("/x.png")) }
    }

    // MARK: delete

    func testDelete() async throws {
        let file = try await provider.item(for: ItemIdentifier("/old.jpg"))
        try await provider.delete(file)
        XCTAssertNil(FavartTesting.served(server, "old.jpg"))
        await expect(.notFound, "a missing file") { try await self.provider.delete(file) }

        let empty = try await provider.item(for: ItemIdentifier("/empty"))
        try await provider.delete(empty)
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.root.appendingPathComponent("empty").path))

        // The API would delete the whole tree: favfs refuses.
        let dir = try await provider.item(for: ItemIdentifier("/dir"))
        await expect(.notEmpty, "a folder with an image") { try await self.provider.delete(dir) }
        XCTAssertNotNil(FavartTesting.served(server, "dir/inner.jpg"))
        XCTAssertEqual(requests(mentioning: "DELETE /media?path=dir"), [], "nothing sent")
    }

    /// Documented limit: files the API does not list are invisible, so a folder holding only
    /// those looks empty and is deleted with them.
    func testDeleteOfAFolderWithOnlyUnlistedFilesRemovesThem() async throws {
        let hidden = try await provider.item(for: ItemIdentifier("/hidden"))
        let children = try await provider.enumerateAll(in: hidden.identifier)
        XCTAssertEqual(children, [])
        try await provider.delete(hidden)
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.root.appendingPathComponent("hidden").path))
    }

    // MARK: not in the API

    func testMoveSymlinkAndSetModifiedAreNotSupported() async throws {
        let file = try await provider.item(for: ItemIdentifier("/old.jpg"))
        await expect(.notSupported, "move") { _ = try await self.provider.move(file, to: ItemIdentifier("/renamed.jpg"), replacing: false) }
        await expect(.notSupported, "symlink") { _ = try await self.provider.createSymlink(ItemIdentifier("/l.jpg"), target: "old.jpg") }
        await expect(.notSupported, "setModified") { _ = try await self.provider.setModified(ItemIdentifier("/old.jpg"), to: 0) }
        XCTAssertNotNil(FavartTesting.served(server, "old.jpg"))
        XCTAssertFalse(provider.capabilities.contains(.rename))
        XCTAssertFalse(provider.capabilities.contains(.symlinks))
    }

    func testWritesToAServerThatIsDownAreUnreachable() async throws {
        let down = try FavartTesting.providerThatIsDown()
        let source = try temp.source(Data("x".utf8))
        await expect(.unreachable, "upload") { _ = try await down.upload(ItemIdentifier("/a.jpg"), from: source, precondition: .none) }
        await expect(.unreachable, "mkdir") { _ = try await down.createFolder(ItemIdentifier("/d")) }
        await expect(.unreachable, "delete") { try await down.delete(Item(identifier: ItemIdentifier("/a.jpg"), kind: .file)) }
    }
}
