import Foundation
import XCTest
import TestSupport

/// `favfs thumbnail` through a real Favart mount: the preview comes from the server once, is
/// kept in the cache dir, and is still there after an unmount (which evicts content).
final class ThumbnailEndToEndTests: XCTestCase {
    func testAPreviewIsFetchedOnceAndOutlivesTheUnmount() throws {
        try E2EGate.require(apache: false)
        let server = try FavartServer.started()
        defer { server.remove() }
        guard let python = FavartServer.python else { throw ShellError("python3 missing") }
        let image = server.root.appendingPathComponent("album/sunset.jpg")
        try FileManager.default.createDirectory(at: image.deletingLastPathComponent(), withIntermediateDirectories: true)
        let make = try Shell.run(python, ["-c", "import sys; from PIL import Image; Image.new('RGB', (640, 480), (40, 120, 200)).save(sys.argv[1], 'JPEG')", image.path])
        XCTAssertEqual(make.status, 0, make.error)

        let m = try MountedFavFS(remote: server.url)
        defer { m.tearDown() }
        try m.mountOrThrow()
        let file = m.mountPoint.appendingPathComponent("album/sunset.jpg").path
        let out = m.base.appendingPathComponent("preview.jpg").path
        let r = try TimedProcess.run(FavFSBinary.path, ["thumbnail", file, "--output", out])
        XCTAssertTrue(r.succeeded, "\(r)")
        let preview = try Data(contentsOf: URL(fileURLWithPath: out))
        XCTAssertEqual(Array(preview.prefix(2)), [0xFF, 0xD8], "not a JPEG")
        XCTAssertLessThan(preview.count, try Data(contentsOf: image).count, "the preview is not smaller than the image")
        let previewsFetched = server.log().components(separatedBy: "/preview").count - 1
        XCTAssertEqual(previewsFetched, 1)

        // Asked again: from the cache dir, no request.
        let again = try TimedProcess.run(FavFSBinary.path, ["thumbnail", file])
        XCTAssertTrue(again.succeeded, "\(again)")
        let kept = again.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(kept.hasPrefix(m.cacheDir.path + "/thumbnails/"), kept)
        XCTAssertEqual(server.log().components(separatedBy: "/preview").count - 1, 1, "the kept preview was fetched again")

        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual(try? Data(contentsOf: URL(fileURLWithPath: kept)), preview, "the preview did not survive the unmount")

        // A folder, and a remote without previews, say why.
        try m.mountOrThrow()
        let folder = try TimedProcess.run(FavFSBinary.path, ["thumbnail", m.mountPoint.appendingPathComponent("album").path])
        XCTAssertFalse(folder.succeeded)
        XCTAssertTrue(folder.stderr.contains("no preview"), folder.stderr)
    }
}
