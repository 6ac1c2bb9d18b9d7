import Foundation
import XCTest
import Logging
import FavFSCore
@testable import Providers

/// Pure logic of the Favart provider: JSON listings, folder inference, versions, query
/// encoding, error texts. No server.
final class FavartParsingTests: XCTestCase {
    private let log = Logger(label: "test")

    // MARK: JSON

    func testParsesAListing() throws {
        let body = Data(#"[{"name": "a.jpg", "size": 10}, {"name": "sub", "size": 4096}, {"name": "ünï ☃.png", "size": 0}]"#.utf8)
        XCTAssertEqual(try FavartListing.parse(body), [
            FavartEntry(name: "a.jpg", size: 10), FavartEntry(name: "sub", size: 4096), FavartEntry(name: "ünï ☃.png", size: 0),
        ])
        XCTAssertEqual(try FavartListing.parse(Data("[]".utf8)), [])
    }

    func testParsesEscapesAndIgnoresUnknownKeys() throws {
        let body = Data(#"[{"name": "tab\there \u00e9 \"q\".jpg", "size": 5, "extra": true}]"#.utf8)
        XCTAssertEqual(try FavartListing.parse(body), [FavartEntry(name: "tab\there é \"q\".jpg", size: 5)])
    }

    func testRefusesWhatIsNotAListing() {
        for bad in ["", "{}", #"{"error": "x"}"#, #"[{"name": "a.jpg"}]"#, #"[{"name": 1, "size": 2}]"#, "[", "<html>"] {
            XCTAssertThrowsError(try FavartListing.parse(Data(bad.utf8)), "accepted \(bad)") { error in
                XCTAssertTrue("\(error)".contains("not a JSON array"), "\(error)")
            }
        }
    }

    // MARK: kinds and versions

    func testImageNamesAreFilesEverythingElseFolders() {
        for file in ["a.jpg", "b.jpeg", "c.png", "x.y.jpg", "trailing dots....jpg", ".jpg", "ünï ☃.jpeg"] {
            XCTAssertTrue(FavartNames.isImage(file), file)
        }
        // The real server's filter is case-sensitive: it never lists a file "b.JPEG", so a
        // listed "b.JPEG" is a folder.
        for folder in ["sub", "photos.2020", "trailing dots...", "a.jpg.d", "jpg", "xjpg", "a.gif", "a.jpg ", "x.jpg\u{301}x", "",
                       "b.JPEG", "d.Png", "e.JPG"] {
            XCTAssertFalse(FavartNames.isImage(folder), folder)
        }
        // A combining accent after ".jpg" is one Character to Swift, but the name still ends in
        // the bytes ".jpg" followed by more: not an image, as the server sees it too.
        XCTAssertFalse(FavartNames.isImage("x.jpg\u{301}"))
    }

    func testItemsFromEntries() {
        let folder = ItemIdentifier("/p")
        let file = FavartListing.item(FavartEntry(name: "a.jpg", size: 123), in: folder)
        XCTAssertEqual(file, Item(identifier: ItemIdentifier("/p/a.jpg"), kind: .file, size: 123, modified: nil, version: "size:123"))
        let sub = FavartListing.item(FavartEntry(name: "sub", size: 4096), in: folder)
        XCTAssertEqual(sub, Item(identifier: ItemIdentifier("/p/sub"), kind: .folder, size: 0, modified: nil, version: nil))
        XCTAssertEqual(FavartListing.item(FavartEntry(name: "r.png", size: 0), in: .rootContainer).identifier, ItemIdentifier("/r.png"))
    }

    func testVersionsAreSizes() {
        XCTAssertEqual(FavartVersion.make(size: 0), "size:0")
        XCTAssertEqual(FavartVersion.size(of: "size:26214400"), 26_214_400)
        XCTAssertNil(FavartVersion.size(of: "\"etag\""))
        XCTAssertNil(FavartVersion.size(of: "size:x"))
    }

    func testPageSkipsUnservableNames() {
        let page = FavartListing.page([FavartEntry(name: "ok.jpg", size: 1), FavartEntry(name: "..", size: 4096),
                                       FavartEntry(name: "", size: 4096)],
                                      folder: .rootContainer, remote: "favart://x", log: log)
        XCTAssertEqual(page.items.map(\.name), ["ok.jpg"])
        XCTAssertEqual(page.skipped.map(\.problem), [.dot, .empty])
        XCTAssertNil(page.nextPage)
    }

    func testReadPinsNoticeAChangedLastModified() {
        let pins = FavartReadPins()
        XCTAssertTrue(pins.check(path: "/a.jpg", version: "size:1", lastModified: "T1"))
        XCTAssertTrue(pins.check(path: "/a.jpg", version: "size:1", lastModified: "T1"))
        XCTAssertFalse(pins.check(path: "/a.jpg", version: "size:1", lastModified: "T2"), "same size, new mtime")
        XCTAssertTrue(pins.check(path: "/a.jpg", version: "size:1", lastModified: "T2"), "the reread is consistent again")
        XCTAssertTrue(pins.check(path: "/a.jpg", version: "size:2", lastModified: "T3"), "a new version pins afresh")
        pins.forget(path: "/a.jpg")
        XCTAssertTrue(pins.check(path: "/a.jpg", version: "size:2", lastModified: "T4"))
    }

    // MARK: URLs

    func testQueryValuesEncodeEverythingOutsideUnreserved() {
        let cases: [(String, String)] = [
            ("a b", "a%20b"), ("a+b", "a%2Bb"), ("a&b", "a%26b"), ("a=b", "a%3Db"), ("#hash", "%23hash"),
            ("100%", "100%25"), ("what?", "what%3F"), ("it's", "it%27s"), ("semi;colon", "semi%3Bcolon"),
            ("co:lon", "co%3Alon"), ("tab\there", "tab%09here"), ("trailing dots...", "trailing%20dots..."),
            ("ünï ☃", "%C3%BCn%C3%AF%20%E2%98%83"), ("a/b", "a%2Fb"), ("safe-_.~AZaz09", "safe-_.~AZaz09"),
        ]
        for (raw, encoded) in cases {
            XCTAssertEqual(FavartURLs.encode(raw), encoded, raw)
            XCTAssertEqual(encoded.removingPercentEncoding, raw, "round trip of \(raw)")
        }
    }

    func testURLs() {
        let urls = FavartURLs(baseURL: "http://127.0.0.1:8080/", rootFolder: "")
        XCTAssertEqual(urls.media(folder: .rootContainer), "http://127.0.0.1:8080/media")
        XCTAssertEqual(urls.media(folder: ItemIdentifier("/a b/c+d")), "http://127.0.0.1:8080/media?path=a%20b%2Fc%2Bd")
        XCTAssertEqual(urls.file(ItemIdentifier("/x&y.jpg")), "http://127.0.0.1:8080/file?id=x%26y.jpg")
        XCTAssertEqual(urls.file(ItemIdentifier("/d/x=y.jpg")), "http://127.0.0.1:8080/file?path=d&id=x%3Dy.jpg")
        XCTAssertEqual(urls.preview(ItemIdentifier("/d/e/p.png")), "http://127.0.0.1:8080/preview?path=d%2Fe&id=p.png")
        XCTAssertEqual(urls.mediaItem(ItemIdentifier("/d/100%")), "http://127.0.0.1:8080/media?path=d%2F100%25")
        XCTAssertEqual(String(decoding: urls.mediaForm(ItemIdentifier("/new dir/a&b")), as: UTF8.self), "path=new%20dir%2Fa%26b")
    }

    func testURLsBelowARootFolder() {
        let urls = FavartURLs(baseURL: "https://h", rootFolder: "/albums/2020/")
        XCTAssertEqual(urls.media(folder: .rootContainer), "https://h/media?path=albums%2F2020")
        XCTAssertEqual(urls.file(ItemIdentifier("/a.jpg")), "https://h/file?path=albums%2F2020&id=a.jpg")
        XCTAssertEqual(urls.apiPath(ItemIdentifier("/s/t")), "albums/2020/s/t")
    }

    // MARK: errors

    func testErrorsCarryTheServersWords() {
        let errors = FavartErrors(remote: "favart://h")
        let e = errors.status(404, request: "GET /media", path: "/x", body: Data(#"{"error": "folder not found: x"}"#.utf8))
        XCTAssertEqual(e.kind, .notFound)
        XCTAssertEqual(e.status, 404)
        XCTAssertEqual(e.description, "favart://h /x: GET /media failed: 404 Not Found — folder not found: x (status 404)")
        XCTAssertEqual(errors.status(400, request: "r", path: "/x").kind, .invalidName)
        XCTAssertEqual(errors.status(413, request: "r", path: "/x").kind, .tooLarge)
        XCTAssertEqual(errors.status(500, request: "r", path: "/x", body: Data("<h1>Boom</h1>".utf8)).detail, "r failed: 500 Internal Server Error — Boom")
        XCTAssertEqual(errors.status(400, request: "r", path: "/x", meaning: [400: .exists]).kind, .exists)
    }

    func testContentRangeTotal() {
        XCTAssertEqual(FavartProvider.contentRangeTotal("bytes 0-99/1000"), 1000)
        XCTAssertEqual(FavartProvider.contentRangeTotal("bytes */7"), 7)
        XCTAssertNil(FavartProvider.contentRangeTotal("bytes 0-9/*"))
        XCTAssertNil(FavartProvider.contentRangeTotal(nil))
    }

    // MARK: factory

    func testFactory() throws {
        let p = try ProviderFactory.make(RemoteURL("favart://127.0.0.1:9/albums"), password: nil)
        XCTAssertTrue(p is FavartProvider)
        XCTAssertEqual(p.remoteDescription, "favart://127.0.0.1:9/albums")
        XCTAssertEqual(p.capabilities, [.write, .delete, .createFolder, .rangedReads, .thumbnails])
        XCTAssertFalse(p.capabilities.contains(.rename))
        let favart = try XCTUnwrap(p as? FavartProvider)
        XCTAssertEqual(favart.urls.media(folder: .rootContainer), "http://127.0.0.1:9/media?path=albums")
        let tls = try XCTUnwrap(try ProviderFactory.make(RemoteURL("favarts://example.org"), password: nil) as? FavartProvider)
        XCTAssertEqual(tls.urls.file(ItemIdentifier("/a.jpg")), "https://example.org/file?id=a.jpg")

        XCTAssertThrowsError(try ProviderFactory.make(RemoteURL("favart://h?bogus=1"), password: nil)) { error in
            XCTAssertTrue("\(error)".contains("unknown option 'bogus'"), "\(error)")
        }
        XCTAssertThrowsError(try ProviderFactory.make(RemoteURL("favart://me@h"), password: nil)) { error in
            XCTAssertTrue("\(error)".contains("no authentication"), "\(error)")
        }
    }
}
