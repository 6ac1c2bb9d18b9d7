import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// The Favart provider's read side against the fixture server (Tests/Fixtures/favart_server.py).
final class FavartProviderTests: XCTestCase {
    private var server: FavartServer!
    private var provider: FavartProvider!
    private var temp = FavartTempFiles()
    private let photo = FavartTesting.bytes(1000)

    override func setUpWithError() throws {
        server = try FavartServer.started()
        try FavartTesting.seed(server, files: [
            "photo.jpg": photo,
            "empty.jpg": Data(),
            "readme.txt": Data("not an image: never listed\n".utf8),
            "sub/inner.png": Data("png-ish".utf8),
        ], folders: ["emptydir"])
        provider = FavartTesting.provider(server)
    }

    override func tearDown() {
        provider = nil
        server?.remove()
        server = nil
        temp = FavartTempFiles()
    }

    // MARK: listing

    func testListsOnlyImagesAndFoldersWithExactSizes() async throws {
        let items = try await provider.enumerateAll(in: .rootContainer)
        XCTAssertEqual(items.map(\.name), ["empty.jpg", "emptydir", "photo.jpg", "sub"])
        let byName = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0) })
        XCTAssertEqual(byName["photo.jpg"], Item(identifier: ItemIdentifier("/photo.jpg"), kind: .file, size: 1000, version: "size:1000"))
        XCTAssertEqual(byName["empty.jpg"]?.size, 0)
        // Folders: the listed size is the inode size (4096); favfs says 0, and no version.
        XCTAssertEqual(byName["sub"], Item(identifier: ItemIdentifier("/sub"), kind: .folder))
        XCTAssertNil(byName["photo.jpg"]?.modified, "listings have no mtimes")
        let sub = try await provider.enumerateAll(in: ItemIdentifier("/sub"))
        XCTAssertEqual(sub.map(\.identifier), [ItemIdentifier("/sub/inner.png")])
        let empty = try await provider.enumerateAll(in: ItemIdentifier("/emptydir"))
        XCTAssertEqual(empty, [])
    }

    func testListsAThousandAndFiftyFilesCompletely() async throws {
        var files: [String: Data] = ["many/notes.txt": Data("x".utf8)]
        for i in 0..<1050 { files[String(format: "many/f%04d.jpg", i)] = Data(repeating: UInt8(i % 256), count: i % 300) }
        try FavartTesting.seed(server, files: files)
        let page = try await provider.enumerateItems(in: ItemIdentifier("/many"), page: nil)
        XCTAssertNil(page.nextPage)
        XCTAssertEqual(page.items.count, 1050)
        for (i, item) in page.items.enumerated() {
            XCTAssertEqual(item.name, String(format: "f%04d.jpg", i))
            XCTAssertEqual(item.kind, .file)
            XCTAssertEqual(item.size, Int64(i % 300))
            XCTAssertEqual(item.version, "size:\(i % 300)")
        }
    }

    func testMissingFolderIsNotFound() async throws {
        do {
            _ = try await provider.enumerateItems(in: ItemIdentifier("/nope"), page: nil)
            XCTFail("listed a missing folder")
        } catch let e as ProviderError {
            // The server answers 500 (as the real one does); its parent's listing says why.
            XCTAssertEqual(e.kind, .notFound)
            XCTAssertEqual(e.status, 500)
            XCTAssertTrue(e.description.contains(server.url) && e.description.contains("/nope") && e.description.contains("there is no folder"),
                          e.description)
        }
    }

    // MARK: item(for:)

    func testItemForMatchesTheListing() async throws {
        let listed = try await provider.enumerateAll(in: .rootContainer)
        for item in listed {
            let single = try await provider.item(for: item.identifier)
            XCTAssertEqual(single, item, "item(for:) and the listing disagree on \(item.identifier)")
        }
        let root = try await provider.item(for: .rootContainer)
        XCTAssertEqual(root.kind, .folder)
        let inner = try await provider.item(for: ItemIdentifier("/sub/inner.png"))
        XCTAssertEqual(inner.size, 7)
    }

    func testItemForMissingIsNotFound() async throws {
        for path in ["/missing.jpg", "/readme.txt", "/nope/a.jpg", "/sub/missing"] {
            do {
                _ = try await provider.item(for: ItemIdentifier(path))
                XCTFail("found \(path)")
            } catch let e as ProviderError {
                XCTAssertEqual(e.kind, .notFound, "\(path): \(e)")
                XCTAssertEqual(e.path, path)
            }
        }
    }

    // MARK: reads

    func testRangedReadsLandAtTheirOffsets() async throws {
        let item = try await provider.item(for: ItemIdentifier("/photo.jpg"))
        let sink = try temp.sink(size: 1000)
        for range: Range<Int64> in [0..<100, 400..<500, 900..<1000] {
            let written = try await provider.readContents(of: item, range: range, into: sink)
            XCTAssertEqual(written, range)
            XCTAssertEqual(temp.read(sink, range), photo[Int(range.lowerBound)..<Int(range.upperBound)])
        }
        // Past the end: clipped.
        let clipped = try await provider.readContents(of: item, range: 950..<2000, into: sink)
        XCTAssertEqual(clipped, 950..<1000)
        // Wholly past the end: nothing (the server answers 416).
        let none = try await provider.readContents(of: item, range: 1000..<1100, into: sink)
        XCTAssertTrue(none.isEmpty)
        // The whole file.
        let wholeSink = try temp.sink()
        let whole = try await provider.readContents(of: item, range: 0..<1000, into: wholeSink)
        XCTAssertEqual(whole, 0..<1000)
        XCTAssertEqual(temp.read(wholeSink, 0..<1000), photo)
    }

    func testReadsAnEmptyFile() async throws {
        let item = try await provider.item(for: ItemIdentifier("/empty.jpg"))
        let written = try await provider.readContents(of: item, range: 0..<4096, into: try temp.sink())
        XCTAssertTrue(written.isEmpty)
        let nothing = try await provider.readContents(of: item, range: 0..<0, into: try temp.sink())
        XCTAssertTrue(nothing.isEmpty)
    }

    func testReadOfAFileThatChangedSizeIsVersionChanged() async throws {
        let item = try await provider.item(for: ItemIdentifier("/photo.jpg"))
        try DirectorySeeding.overwrite(server.root, "photo.jpg", with: FavartTesting.bytes(1200, seed: 2))
        do {
            _ = try await provider.readContents(of: item, range: 0..<100, into: try temp.sink())
            XCTFail("read a changed file")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .versionChanged, "\(e)")
        }
        // Shrunk below the requested start: 416 with the new total.
        try DirectorySeeding.overwrite(server.root, "photo.jpg", with: Data(count: 10))
        do {
            _ = try await provider.readContents(of: item, range: 500..<600, into: try temp.sink())
            XCTFail("read a shrunk file")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .versionChanged, "\(e)")
        }
    }

    /// Same size, new mtime: the size version cannot see it, the Last-Modified pin can (once
    /// the version was read before in this process).
    func testReadNoticesASameSizeEditByLastModified() async throws {
        let item = try await provider.item(for: ItemIdentifier("/photo.jpg"))
        let sink = try temp.sink(size: 1000)
        _ = try await provider.readContents(of: item, range: 0..<100, into: sink)
        try DirectorySeeding.overwrite(server.root, "photo.jpg", with: FavartTesting.bytes(1000, seed: 3))
        do {
            _ = try await provider.readContents(of: item, range: 100..<200, into: sink)
            XCTFail("mixed two versions of a file")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .versionChanged, "\(e)")
            XCTAssertTrue(e.detail.contains("Last-Modified"), e.detail)
        }
        // The caller starts over (same size version): consistent again, the new bytes.
        let again = try await provider.item(for: ItemIdentifier("/photo.jpg"))
        XCTAssertEqual(again.version, item.version)
        _ = try await provider.readContents(of: again, range: 0..<1000, into: sink)
        XCTAssertEqual(temp.read(sink, 0..<1000), FavartTesting.bytes(1000, seed: 3))
    }

    func testReadOfADeletedFileIsNotFound() async throws {
        let item = try await provider.item(for: ItemIdentifier("/photo.jpg"))
        try FileManager.default.removeItem(at: server.root.appendingPathComponent("photo.jpg"))
        do {
            _ = try await provider.readContents(of: item, range: 0..<10, into: try temp.sink())
            XCTFail("read a deleted file")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .notFound)
            XCTAssertEqual(e.status, 404)
        }
    }

    // MARK: awkward names

    func testAwkwardNamesAsFilesAndFolders() async throws {
        var files: [String: Data] = [:]
        for name in TreeGenerator.awkwardNames {
            files["awk/\(name).jpg"] = Data("file \(name)".utf8)
            files["awk/\(name)/inside \(name).jpg"] = Data("inside \(name)".utf8)
        }
        try FavartTesting.seed(server, files: files)
        let listed = try await provider.enumerateAll(in: ItemIdentifier("/awk"))
        XCTAssertEqual(listed.count, TreeGenerator.awkwardNames.count * 2)
        for name in TreeGenerator.awkwardNames {
            let folderID = ItemIdentifier("/awk").child(name)
            let fileID = ItemIdentifier("/awk").child(name + ".jpg")
            XCTAssertEqual(listed.first { $0.identifier == folderID }?.kind, .folder, name)
            XCTAssertEqual(listed.first { $0.identifier == fileID }?.kind, .file, name)

            let file = try await provider.item(for: fileID)
            let sink = try temp.sink()
            let n = try await provider.readContents(of: file, range: 0..<file.size, into: sink)
            XCTAssertEqual(temp.read(sink, n), Data("file \(name)".utf8), name)

            let folder = try await provider.item(for: folderID)
            XCTAssertEqual(folder.kind, .folder)
            let inside = try await provider.enumerateAll(in: folderID)
            XCTAssertEqual(inside.map(\.name), ["inside \(name).jpg"], name)
            let insideItem = try await provider.item(for: folderID.child("inside \(name).jpg"))
            let sink2 = try temp.sink()
            let m = try await provider.readContents(of: insideItem, range: 0..<insideItem.size, into: sink2)
            XCTAssertEqual(temp.read(sink2, m), Data("inside \(name)".utf8), name)
        }
    }

    // MARK: errors

    func testServerDownIsUnreachable() async throws {
        let down = try FavartTesting.providerThatIsDown()
        do {
            _ = try await down.enumerateItems(in: .rootContainer, page: nil)
            XCTFail("listed a server that is down")
        } catch let e as ProviderError {
            XCTAssertTrue(e.kind == .unreachable || e.kind == .timedOut, "\(e)")
            XCTAssertTrue(e.description.contains(down.remoteDescription) && e.description.contains("GET /media"), e.description)
        }
        do {
            _ = try await down.item(for: ItemIdentifier("/a.jpg"))
            XCTFail("stat on a server that is down")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .unreachable, "\(e)")
        }
    }

    func testAFolderBelowTheMediaRootAsTheRemoteRoot() async throws {
        let scoped = FavartProvider(configuration: .init(baseURL: server.httpURL, rootFolder: "/sub", remoteDescription: server.url + "sub"),
                                    transport: CurlTransport())
        let items = try await scoped.enumerateAll(in: .rootContainer)
        XCTAssertEqual(items.map(\.identifier), [ItemIdentifier("/inner.png")])
        let sink = try temp.sink()
        let n = try await scoped.readContents(of: items[0], range: 0..<7, into: sink)
        XCTAssertEqual(temp.read(sink, n), Data("png-ish".utf8))
    }

    /// Not a regular test: measures what a Last-Modified per listed item would cost (one ranged
    /// GET per file) against the listing itself. Run with FAVART_MEASURE=1.
    func testMeasureLastModifiedPerItem() async throws {
        guard ProcessInfo.processInfo.environment["FAVART_MEASURE"] == "1" else { throw XCTSkip("FAVART_MEASURE=1 to run") }
        var files: [String: Data] = [:]
        for i in 0..<1000 { files[String(format: "m/f%04d.jpg", i)] = Data(count: 100) }
        try FavartTesting.seed(server, files: files)
        let t0 = Date()
        let items = try await provider.enumerateAll(in: ItemIdentifier("/m"))
        let listing = Date().timeIntervalSince(t0)
        let t1 = Date()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for chunk in stride(from: 0, to: items.count, by: 125) {
                let slice = items[chunk..<min(chunk + 125, items.count)]
                group.addTask { [provider, temp] in
                    for item in slice { _ = try await provider!.readContents(of: item, range: 0..<1, into: try temp.sink()) }
                }
            }
            try await group.waitForAll()
        }
        let probes = Date().timeIntervalSince(t1)
        print("favart: listing 1,000 files \(String(format: "%.3f", listing)) s; 1,000 ranged GETs (8 parallel) \(String(format: "%.3f", probes)) s")
    }
}
