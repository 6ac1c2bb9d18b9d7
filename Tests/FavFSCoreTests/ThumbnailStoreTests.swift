import Foundation
import XCTest
@testable import FavFSCore

/// `ThumbnailStore` on its own: what it keeps, where, and that a kept preview costs no call.
/// The provider here only counts calls (the real one is tested against its server in
/// ProvidersTests/Favart).
final class ThumbnailStoreTests: XCTestCase {
    private final class CountingThumbnails: ThumbnailProvider, @unchecked Sendable {
        let remoteDescription = "test://thumbnails"
        var capabilities: ProviderCapabilities { [.thumbnails] }
        private let lock = NSLock()
        private var _calls = 0
        var failing = false
        var calls: Int { lock.withLock { _calls } }

        func thumbnail(for item: Item) async throws -> Data {
            lock.withLock { _calls += 1 }
            if failing { throw ProviderError(.unreachable, remote: remoteDescription, path: item.identifier.rawValue, detail: "down") }
            return Data("preview of \(item.identifier.rawValue) at \(item.version ?? "-")".utf8)
        }
        func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage { EnumerationPage(items: []) }
        func item(for identifier: ItemIdentifier) async throws -> Item { Item(identifier: identifier, kind: .file) }
        func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> { range }
    }

    private var cacheDir: URL!

    override func setUp() {
        cacheDir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-thumbstore-\(UUID().uuidString.prefix(8))")
    }

    override func tearDown() { try? FileManager.default.removeItem(at: cacheDir) }

    func testKeepsAPreviewPerPathAndVersion() async throws {
        let provider = CountingThumbnails()
        let store = try ThumbnailStore(cacheDirectory: cacheDir)
        let item = Item(identifier: ItemIdentifier("/a/p.jpg"), kind: .file, size: 3, version: "size:3")

        let first = try await store.thumbnail(for: item, from: provider)
        XCTAssertEqual(first, Data("preview of /a/p.jpg at size:3".utf8))
        XCTAssertEqual(provider.calls, 1)
        let file = store.fileURL(for: item)
        XCTAssertEqual(file.deletingLastPathComponent().lastPathComponent, "thumbnails")
        XCTAssertEqual(file.deletingLastPathComponent().deletingLastPathComponent().path, cacheDir.path)
        XCTAssertEqual(file.lastPathComponent.count, 64 + 4, "sha256 hex + .jpg")
        XCTAssertEqual(try Data(contentsOf: file), first)

        provider.failing = true
        let again = try await store.thumbnail(for: item, from: provider)
        XCTAssertEqual(again, first)
        XCTAssertEqual(provider.calls, 1, "kept: no second call")
        // Kept across a new store on the same cache folder (a remount).
        let reopened = try ThumbnailStore(cacheDirectory: cacheDir)
        XCTAssertEqual(reopened.cached(item), first)

        // Another version or another path is another preview.
        var changed = item
        changed.version = "size:4"
        XCTAssertNil(store.cached(changed))
        XCTAssertNotEqual(store.fileURL(for: changed), file)
        XCTAssertNotEqual(store.fileURL(for: Item(identifier: ItemIdentifier("/a/q.jpg"), kind: .file, version: "size:3")), file)
        provider.failing = false
        let fresh = try await store.thumbnail(for: changed, from: provider)
        XCTAssertEqual(fresh, Data("preview of /a/p.jpg at size:4".utf8))
        XCTAssertEqual(provider.calls, 2)

        try store.removeAll()
        XCTAssertNil(store.cached(item))
    }

    func testAFailedFetchKeepsNothing() async throws {
        let provider = CountingThumbnails()
        provider.failing = true
        let store = try ThumbnailStore(cacheDirectory: cacheDir)
        let item = Item(identifier: ItemIdentifier("/x.jpg"), kind: .file, version: "v")
        do {
            _ = try await store.thumbnail(for: item, from: provider)
            XCTFail("no error")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .unreachable)
        }
        XCTAssertNil(store.cached(item))
    }

    func testKeyIsSHA256OfPathAndVersion() {
        XCTAssertEqual(SHA256.hex(Array("".utf8)), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.hex(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // Two blocks (56..63 bytes of padding boundary).
        XCTAssertEqual(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        let item = Item(identifier: ItemIdentifier("/p.jpg"), kind: .file, version: "size:3")
        XCTAssertEqual(ThumbnailStore.key(for: item), SHA256.hex(Array("/p.jpg".utf8) + [0] + Array("size:3".utf8)))
    }
}
