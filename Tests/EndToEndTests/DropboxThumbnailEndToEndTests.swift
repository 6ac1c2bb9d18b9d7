import Foundation
import TestSupport
import XCTest

/// A Dropbox mount writes freedesktop thumbnails from Dropbox's previews
/// (`files/get_thumbnail_v2`), checked by the same independent reader as Favart's
/// (`FreedesktopThumbnailEndToEndTests.checker`): listing a folder of photos downloads none.
final class DropboxThumbnailEndToEndTests: XCTestCase {
    func testListingAFolderOfPhotosWritesThumbnailsWithoutDownloadingThem() throws {
        try E2EGate.require(apache: false)
        let s = try DropboxServer.started()
        defer { s.remove() }
        guard let python = TestPython.path else { throw ShellError("python3 missing") }
        let album = s.root.appendingPathComponent("album")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        for (name, size) in [("sunset.jpg", "640, 480"), ("été 1.jpg", "300, 900"), ("tiny.png", "64, 64")] {
            let make = try Shell.run(python, ["-c", "import sys; from PIL import Image; Image.new('RGB', (\(size)), (40, 120, 200)).save(sys.argv[1])",
                                              album.appendingPathComponent(name).path])
            XCTAssertEqual(make.status, 0, make.error)
        }
        try Data("not an image\n".utf8).write(to: album.appendingPathComponent("notes.txt"))
        let remote = ConformanceRemote(url: "dropbox:///", options: ["client_id": s.clientID, "endpoint": s.endpoint], secret: s.refreshToken)
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        let xdg = m.base.appendingPathComponent("xdg-cache")
        let mounted = try TimedProcess.run("/usr/bin/env", ["XDG_CACHE_HOME=\(xdg.path)", FavFSBinary.path, "mount", m.path,
                                                            "--remote", remote.urlWithOptions, "--cache-dir", m.cacheDir.path, "--password-stdin"],
                                           stdin: (remote.secret ?? "") + "\n", timeout: 90)
        XCTAssertTrue(mounted.succeeded, "\(mounted)")
        let normal = xdg.appendingPathComponent("thumbnails/normal")
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: m.path + "/album")), ["sunset.jpg", "été 1.jpg", "tiny.png", "notes.txt"])
        let appeared = waitUntil(30) { ((try? FileManager.default.contentsOfDirectory(atPath: normal.path)) ?? []).filter { $0.hasSuffix(".png") }.count == 3 }
        XCTAssertTrue(appeared, "thumbnails: \((try? FileManager.default.contentsOfDirectory(atPath: normal.path)) ?? []); \(m.logProblems())")

        let check = try TimedProcess.run(python, ["-c", FreedesktopThumbnailEndToEndTests.checker, normal.path,
                                                  m.path + "/album/sunset.jpg", m.path + "/album/été 1.jpg", m.path + "/album/tiny.png"], timeout: 60)
        XCTAssertTrue(check.succeeded, "\(check)")
        XCTAssertEqual(check.stdout.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count, 3, check.stdout)
        XCTAssertEqual(s.requests("files/download"), 0, "an original was downloaded: \(s.log())")
        XCTAssertEqual(s.requests("get_thumbnail_v2"), 3, s.log())
        XCTAssertTrue(try m.unmount().succeeded)
    }
}
