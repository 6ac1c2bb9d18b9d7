import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// Previews: GET /preview through `ThumbnailProvider`, kept by `ThumbnailStore`.
final class FavartThumbnailTests: XCTestCase {
    private var server: FavartServer!
    private var provider: FavartProvider!
    private var cacheDir: URL!

    override func setUpWithError() throws {
        server = try FavartServer.started()
        guard FavartServer.hasPillow else {
            if TestEnvironment.isCI { XCTFail("Pillow is missing (pip install pillow) and CI=true"); return }
            throw XCTSkip("previews need Pillow: pip install pillow")
        }
        try FavartTesting.makeJPEG(at: server.root.appendingPathComponent("album/sunset.jpg"), width: 640, height: 480)
        try FavartTesting.seed(server, files: ["album/not really.jpg": Data("not an image".utf8)])
        provider = FavartTesting.provider(server)
        cacheDir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-thumbs-\(UUID().uuidString.prefix(8))")
    }

    override func tearDown() {
        provider = nil
        server?.remove()
        server = nil
        if let cacheDir { try? FileManager.default.removeItem(at: cacheDir) }
    }

    func testPreviewIsAJPEG120Wide() async throws {
        XCTAssertTrue(provider.capabilities.contains(.thumbnails))
        let item = try await provider.item(for: ItemIdentifier("/album/sunset.jpg"))
        let preview = try await provider.thumbnail(for: item)
        let size = try XCTUnwrap(FavartTesting.jpegSize(preview), "not a JPEG")
        XCTAssertEqual(size.width, 120)
        XCTAssertEqual(size.height, 90)
    }

    func testPreviewIsKeptAndServedWithoutTheNetwork() async throws {
        let store = try ThumbnailStore(cacheDirectory: cacheDir)
        let item = try await provider.item(for: ItemIdentifier("/album/sunset.jpg"))
        let first = try await store.thumbnail(for: item, from: provider)
        XCTAssertEqual(FavartTesting.jpegSize(first)?.width, 120)
        let kept = store.fileURL(for: item)
        XCTAssertEqual(kept.deletingLastPathComponent().path, cacheDir.appendingPathComponent("thumbnails").path)
        XCTAssertEqual(kept.pathExtension, "jpg")
        XCTAssertEqual(try Data(contentsOf: kept), first)
        let fetches = server.log().components(separatedBy: "GET /preview").count - 1
        XCTAssertEqual(fetches, 1)

        // No server at all: still there, from disk (also for a new store, as after a remount).
        server.stop()
        let second = try await store.thumbnail(for: item, from: provider)
        XCTAssertEqual(second, first)
        let reopened = try ThumbnailStore(cacheDirectory: cacheDir)
        let third = try await reopened.thumbnail(for: item, from: provider)
        XCTAssertEqual(third, first)

        // Another version is another preview: it needs the server, which is down.
        var changed = item
        changed.version = "size:1"
        do {
            _ = try await store.thumbnail(for: changed, from: provider)
            XCTFail("served the preview of another version")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .unreachable, "\(e)")
        }
    }

    func testPreviewErrors() async throws {
        let broken = try await provider.item(for: ItemIdentifier("/album/not really.jpg"))
        do {
            _ = try await provider.thumbnail(for: broken)
            XCTFail("a preview of bytes that are no image")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .serverError)
            XCTAssertEqual(e.status, 500)
            XCTAssertTrue(e.detail.contains("cannot make a preview"), e.detail)
        }
        do {
            _ = try await provider.thumbnail(for: Item(identifier: ItemIdentifier("/album/gone.jpg"), kind: .file))
            XCTFail("a preview of a missing file")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .notFound)
        }
        do {
            _ = try await provider.thumbnail(for: Item(identifier: ItemIdentifier("/album"), kind: .folder))
            XCTFail("a preview of a folder")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .isAFolder)
        }
    }
}
