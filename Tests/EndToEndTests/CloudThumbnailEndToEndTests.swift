import Foundation
import TestSupport
import XCTest

/// Dropbox and OneDrive mounts write freedesktop thumbnails from the service's previews
/// (`files/get_thumbnail_v2`; Graph's `thumbnails/0/c128x128/content`), checked by the same
/// independent reader as Favart's (`FreedesktopThumbnailEndToEndTests.checker`): listing a
/// folder of photos downloads none, and a file that is no image gets none.
final class CloudThumbnailEndToEndTests: XCTestCase {
    func testADropboxFolderOfPhotosGetsThumbnailsWithoutDownloads() throws {
        try E2EGate.require(apache: false)
        let s = try DropboxServer.started()
        defer { s.remove() }
        let remote = ConformanceRemote(url: "dropbox:///", options: ["client_id": s.clientID, "endpoint": s.endpoint], secret: s.refreshToken)
        try check(served: s.root, remote: remote, log: { s.log() }, downloads: "files/download", previews: "get_thumbnail_v2")
    }

    func testAOneDriveFolderOfPhotosGetsThumbnailsWithoutDownloads() throws {
        try E2EGate.require(apache: false)
        let s = try OneDriveServer.started()
        defer { s.remove() }
        let remote = ConformanceRemote(url: "onedrive:///", options: ["client_id": s.clientID, "endpoint": s.endpoint], secret: s.refreshToken)
        try check(served: s.root, remote: remote, log: { s.log() }, downloads: "/download/", previews: "/thumbnails/0/c128x128/content")
    }

    /// Three photos and a text file in `album`; a mount lists it; three thumbnails appear,
    /// standard ones, and the server's log (`log`) has no request containing `downloads` and
    /// three containing `previews`.
    private func check(served: URL, remote: ConformanceRemote, log: () -> String, downloads: String, previews: String,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        guard let python = TestPython.path else { throw ShellError("python3 missing") }
        let album = served.appendingPathComponent("album")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        for (name, size) in [("sunset.jpg", "640, 480"), ("été 1.jpg", "300, 900"), ("tiny.png", "64, 64")] {
            let make = try Shell.run(python, ["-c", "import sys; from PIL import Image; Image.new('RGB', (\(size)), (40, 120, 200)).save(sys.argv[1])",
                                              album.appendingPathComponent(name).path])
            XCTAssertEqual(make.status, 0, make.error, file: file, line: line)
        }
        try Data("not an image\n".utf8).write(to: album.appendingPathComponent("notes.txt"))
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        let xdg = m.base.appendingPathComponent("xdg-cache")
        let mounted = try TimedProcess.run("/usr/bin/env", ["XDG_CACHE_HOME=\(xdg.path)", FavFSBinary.path, "mount", m.path,
                                                            "--remote", remote.urlWithOptions, "--cache-dir", m.cacheDir.path, "--password-stdin"],
                                           stdin: (remote.secret ?? "") + "\n", timeout: 90)
        XCTAssertTrue(mounted.succeeded, "\(mounted)", file: file, line: line)
        let normal = xdg.appendingPathComponent("thumbnails/normal")
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: m.path + "/album")), ["sunset.jpg", "été 1.jpg", "tiny.png", "notes.txt"],
                       file: file, line: line)
        let appeared = waitUntil(30) { ((try? FileManager.default.contentsOfDirectory(atPath: normal.path)) ?? []).filter { $0.hasSuffix(".png") }.count == 3 }
        XCTAssertTrue(appeared, "thumbnails: \((try? FileManager.default.contentsOfDirectory(atPath: normal.path)) ?? []); \(m.logProblems())",
                      file: file, line: line)

        let check = try TimedProcess.run(python, ["-c", FreedesktopThumbnailEndToEndTests.checker, normal.path,
                                                  m.path + "/album/sunset.jpg", m.path + "/album/été 1.jpg", m.path + "/album/tiny.png"], timeout: 60)
        XCTAssertTrue(check.succeeded, "\(check)", file: file, line: line)
        XCTAssertEqual(check.stdout.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count, 3, check.stdout, file: file, line: line)
        let requests = log().components(separatedBy: "\n")
        XCTAssertEqual(requests.filter { $0.contains(downloads) }.count, 0, "an original was downloaded: \(log())", file: file, line: line)
        XCTAssertEqual(requests.filter { $0.contains(previews) }.count, 3, log(), file: file, line: line)
        XCTAssertTrue(try m.unmount().succeeded, file: file, line: line)
    }
}
