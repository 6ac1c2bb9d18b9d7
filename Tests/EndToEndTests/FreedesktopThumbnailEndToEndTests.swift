import Foundation
import XCTest
import TestSupport

/// Listing a folder of a Favart mount writes freedesktop thumbnails for its images from the
/// server's previews, checked against the Thumbnail Managing Standard by an independent
/// reader (Python: md5 of the URI as GLib escapes it, PNG signature and size, Thumb::URI,
/// Thumb::MTime equal to the mtime stat reports); the originals are never requested.
final class FreedesktopThumbnailEndToEndTests: XCTestCase {
    func testListingAFolderWritesStandardThumbnailsWithoutDownloadingTheImages() throws {
        try E2EGate.require(apache: false)
        let server = try FavartServer.started()
        defer { server.remove() }
        guard let python = FavartServer.python else { throw ShellError("python3 missing") }
        try Self.makeImages([("sunset.jpg", "640, 480"), ("été 1.jpg", "300, 900"), ("tiny.png", "64, 64")],
                            in: server.root.appendingPathComponent("album"), python: python)
        let m = try MountedFavFS(remote: server.url)
        defer { m.tearDown() }
        let xdg = m.base.appendingPathComponent("xdg-cache")
        let mount = { try TimedProcess.run("/usr/bin/env", ["XDG_CACHE_HOME=\(xdg.path)", FavFSBinary.path, "mount", m.path,
                                                            "--remote", server.url, "--cache-dir", m.cacheDir.path], timeout: 90) }
        let mounted = try mount()
        XCTAssertTrue(mounted.succeeded, "\(mounted)")
        let normal = xdg.appendingPathComponent("thumbnails/normal")
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: m.path + "/album")), ["sunset.jpg", "été 1.jpg", "tiny.png"])
        let appeared = waitUntil(30) { ((try? FileManager.default.contentsOfDirectory(atPath: normal.path)) ?? []).filter { $0.hasSuffix(".png") }.count == 3 }
        XCTAssertTrue(appeared, "thumbnails: \((try? FileManager.default.contentsOfDirectory(atPath: normal.path)) ?? [])")

        let check = try TimedProcess.run(python, ["-c", Self.checker, normal.path, m.path + "/album/sunset.jpg", m.path + "/album/été 1.jpg", m.path + "/album/tiny.png"], timeout: 60)
        XCTAssertTrue(check.succeeded, "\(check)")
        XCTAssertEqual(check.stdout.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count, 3, check.stdout)
        XCTAssertFalse(server.log().contains("GET /file"), "an original was downloaded: \(server.log())")
        let previews = server.log().components(separatedBy: "GET /preview").count - 1
        XCTAssertEqual(previews, 3)

        // Up to date after a remount: listed again, nothing fetched or rewritten.
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertTrue(try mount().succeeded)
        _ = try FileManager.default.contentsOfDirectory(atPath: m.path + "/album")
        sleep(2)
        XCTAssertEqual(server.log().components(separatedBy: "GET /preview").count - 1, 3, "up-to-date thumbnails were made again")
        XCTAssertTrue(try m.unmount().succeeded)
    }

    /// tumbler, which Thunar asks for the thumbnails of a folder it shows, finds favfs's
    /// thumbnails up to date (their Thumb::MTime is the time the mount shows) and downloads no
    /// image; the one image whose thumbnail was taken away is downloaded and thumbnailed, which
    /// shows tumbler did look at all three.
    func testTumblerKeepsTheThumbnailsAndDownloadsNoImage() throws {
        try E2EGate.require(apache: false)
        guard let tumblerd = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/x86_64-linux-gnu/tumbler-1"))?.contains("tumblerd"),
              tumblerd, FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-run-session") else {
            if TestEnvironment.isCI { return XCTFail("tumbler or dbus-run-session is not installed (make setup installs them)") }
            throw XCTSkip("tumbler or dbus-run-session is not installed")
        }
        let server = try FavartServer.started()
        defer { server.remove() }
        guard let python = FavartServer.python else { throw ShellError("python3 missing") }
        let names = ["sunset.jpg", "été 1.jpg", "tiny.png"]
        try Self.makeImages(names.map { ($0, "320, 240") }, in: server.root.appendingPathComponent("album"), python: python)
        let m = try MountedFavFS(remote: server.url)
        defer { m.tearDown() }
        let xdg = m.base.appendingPathComponent("xdg-cache")
        let mounted = try TimedProcess.run("/usr/bin/env", ["XDG_CACHE_HOME=\(xdg.path)", FavFSBinary.path, "mount", m.path,
                                                           "--remote", server.url, "--cache-dir", m.cacheDir.path], timeout: 90)
        XCTAssertTrue(mounted.succeeded, "\(mounted)")
        let normal = xdg.appendingPathComponent("thumbnails/normal")
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: m.path + "/album")), Set(names))
        let thumbnails = { ((try? FileManager.default.contentsOfDirectory(atPath: normal.path)) ?? []).filter { $0.hasSuffix(".png") } }
        XCTAssertTrue(waitUntil(30) { thumbnails().count == 3 }, "thumbnails: \(thumbnails())")
        let files = names.map { m.path + "/album/" + $0 }

        // The control: tiny.png's thumbnail goes, so tumbler must make it from the image.
        let control = try TimedProcess.run(python, ["-c", Self.thumbnailName, files[2]], timeout: 30)
        XCTAssertTrue(control.succeeded, "\(control)")
        try FileManager.default.removeItem(at: normal.appendingPathComponent(control.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let kept = try thumbnails().map { name in (name, try Data(contentsOf: normal.appendingPathComponent(name))) }

        let queued = try TimedProcess.run("/usr/bin/env", ["XDG_CACHE_HOME=\(xdg.path)", "/usr/bin/dbus-run-session", "--",
                                                          ChangeDetectionEndToEndTests.fixture("tumbler_queue.sh"), "8"] + files, timeout: 60)
        XCTAssertTrue(queued.succeeded, "\(queued)")
        XCTAssertTrue(waitUntil(20) { server.log().contains("GET /file?path=album&id=tiny.png") },
                      "tumbler did not thumbnail the image whose thumbnail was removed (it did not run?): \(server.log())")
        let downloads = server.log().split(separator: "\n").filter { $0.contains("GET /file") }
        XCTAssertTrue(downloads.allSatisfy { $0.contains("id=tiny.png") }, "tumbler downloaded an image favfs had a thumbnail of: \(downloads)")
        for (name, data) in kept {
            XCTAssertEqual(try? Data(contentsOf: normal.appendingPathComponent(name)), data, "tumbler rewrote \(name)")
        }
        XCTAssertTrue(waitUntil(20) { thumbnails().count == 3 }, "tumbler did not make the missing thumbnail: \(thumbnails())")
        XCTAssertTrue(try m.unmount().succeeded)
    }

    /// Images of these names and sizes ("W, H") in `folder`, made with Pillow.
    static func makeImages(_ images: [(name: String, size: String)], in folder: URL, python: String) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, size) in images {
            let make = try Shell.run(python, ["-c", "import sys; from PIL import Image; Image.new('RGB', (\(size)), (40, 120, 200)).save(sys.argv[1])",
                                              folder.appendingPathComponent(name).path])
            guard make.status == 0 else { throw ShellError("making \(name): \(make.error)") }
        }
    }

    /// The name of a file's "normal" thumbnail: md5 of its URI as GLib escapes it.
    static let thumbnailName = #"""
    import hashlib, sys, urllib.parse
    print(hashlib.md5(("file://" + urllib.parse.quote(sys.argv[1], safe="/!$&'()*+,;=:@-._~")).encode()).hexdigest() + ".png")
    """#

    /// Reads each thumbnail as a file manager would find it, independently of favfs's code.
    static let checker = #"""
    import hashlib, os, struct, sys, urllib.parse, zlib
    folder = sys.argv[1]
    for path in sys.argv[2:]:
        uri = "file://" + urllib.parse.quote(path, safe="/!$&'()*+,;=:@-._~")
        thumb = os.path.join(folder, hashlib.md5(uri.encode()).hexdigest() + ".png")
        data = open(thumb, "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG: " + thumb
        at, text, size = 8, {}, None
        while at < len(data):
            length, kind = struct.unpack(">I4s", data[at:at + 8])
            body = data[at + 8:at + 8 + length]
            assert zlib.crc32(kind + body) == struct.unpack(">I", data[at + 8 + length:at + 12 + length])[0], "bad CRC"
            if kind == b"IHDR": size = struct.unpack(">II", body[:8])
            if kind == b"tEXt":
                k, v = body.split(b"\0", 1)
                text[k.decode()] = v.decode("latin-1")
            at += 12 + length
        assert text.get("Thumb::URI") == uri, (text, uri)
        assert text.get("Thumb::MTime") == str(int(os.stat(path).st_mtime)), (text, os.stat(path).st_mtime)
        # Favart keeps no times: favfs shows when it first saw the image, never 0 (tumbler
        # rebuilds a thumbnail whose MTime is 0, downloading the image).
        assert int(os.stat(path).st_mtime) > 1_000_000_000, ("no time", path, os.stat(path).st_mtime)
        assert max(size) <= 128 and min(size) > 0, size
        assert oct(os.stat(thumb).st_mode & 0o777) == "0o600", oct(os.stat(thumb).st_mode)
        print("ok", path, size, text["Thumb::MTime"])
    """#
}
