import Foundation
import XCTest
@testable import Providers
import FavFSCore

/// The multistatus parser on bodies in the shapes real servers send.
final class MultistatusTests: XCTestCase {
    private func parse(_ xml: String) throws -> [DAVResource] { try Multistatus.parse(Data(xml.utf8)) }

    /// Status lines as servers write them, read from their bytes: the code is the second word.
    func testStatusLines() {
        let lines: [(String, Int?)] = [
            ("HTTP/1.1 200 OK", 200), ("\n   HTTP/1.1 404 Not Found\n  ", 404), ("HTTP/1.1  207  Multi-Status", 207),
            ("\tHTTP/1.0 500", 500), ("HTTP/1.1", nil), ("", nil), ("   ", nil), ("HTTP/1.1 2OO OK", nil),
            ("HTTP/1.1\t200 OK", nil),
        ]
        for (line, code) in lines {
            XCTAssertEqual(Multistatus.statusCode(utf8: Array(line.utf8)), code, line.debugDescription)
        }
    }

    func testApacheShapeWithLp1PrefixesAnd404Propstat() throws {
        let xml = """
        <?xml version="1.0" encoding="utf-8"?>
        <D:multistatus xmlns:D="DAV:" xmlns:ns0="DAV:">
        <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
        <D:href>/files/</D:href>
        <D:propstat>
        <D:prop>
        <lp1:resourcetype><D:collection/></lp1:resourcetype>
        <lp1:getlastmodified>Sun, 06 Nov 1994 08:49:37 GMT</lp1:getlastmodified>
        <lp1:getetag>"1000-5f1a2b3c4d5e6"</lp1:getetag>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        <D:propstat>
        <D:prop>
        <D:getcontentlength/>
        </D:prop>
        <D:status>HTTP/1.1 404 Not Found</D:status>
        </D:propstat>
        </D:response>
        <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
        <D:href>/files/a%20b%23c.txt</D:href>
        <D:propstat>
        <D:prop>
        <lp1:resourcetype/>
        <lp1:getcontentlength>1234</lp1:getcontentlength>
        <lp1:getlastmodified>Sun, 06 Nov 1994 08:49:37 GMT</lp1:getlastmodified>
        <lp1:getetag>"4d2-5f1a2b3c4d5e6"</lp1:getetag>
        <lp2:executable>F</lp2:executable>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        </D:response>
        </D:multistatus>
        """
        let r = try parse(xml)
        XCTAssertEqual(r.count, 2)
        XCTAssertEqual(r[0].href, "/files/")
        XCTAssertTrue(r[0].isCollection)
        XCTAssertNil(r[0].contentLength)
        XCTAssertEqual(r[0].etag, "\"1000-5f1a2b3c4d5e6\"")
        XCTAssertEqual(r[1].href, "/files/a%20b%23c.txt")
        XCTAssertFalse(r[1].isCollection)
        XCTAssertEqual(r[1].contentLength, 1234)
        XCTAssertEqual(r[1].lastModified.flatMap(HTTPDate.parse), 784_111_777)
    }

    func testDefaultNamespaceAndAbsoluteURLHrefs() throws {
        let xml = """
        <?xml version="1.0"?>
        <multistatus xmlns="DAV:">
          <response>
            <href>https://dav.example.com:8443/remote.php/dav/files/u/</href>
            <propstat><prop><resourcetype><collection/></resourcetype><getetag>W/"abc"</getetag></prop>
              <status>HTTP/1.1 200 OK</status></propstat>
          </response>
          <response>
            <href>https://dav.example.com:8443/remote.php/dav/files/u/%C3%BCn%C3%AFc%C3%B6d%C3%A9%20%E2%98%83</href>
            <propstat><prop><resourcetype/><getcontentlength>7</getcontentlength></prop><status>HTTP/1.1 200 OK</status></propstat>
            <propstat><prop><getetag/></prop><status>HTTP/1.1 404 Not Found</status></propstat>
          </response>
        </multistatus>
        """
        let r = try parse(xml)
        XCTAssertEqual(r.count, 2)
        XCTAssertTrue(r[0].isCollection)
        XCTAssertEqual(r[0].etag, "W/\"abc\"")
        XCTAssertEqual(r[1].contentLength, 7)
        XCTAssertNil(r[1].etag)
        let paths = WebDAVPaths(baseURL: "https://dav.example.com:8443/remote.php/dav/files/u/")
        XCTAssertEqual(paths.relation(ofHref: r[0].href, to: .rootContainer), .itself)
        XCTAssertEqual(paths.relation(ofHref: r[1].href, to: .rootContainer), .child(name: "ünïcödé ☃"))
    }

    func testOtherPrefixesAndForeignNamespacesAreIgnored() throws {
        let xml = """
        <d:multistatus xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:x="urn:other">
        <d:response><d:href>/dav/f.txt</d:href>
        <d:propstat><d:prop>
          <x:getetag>"not-this-one"</x:getetag>
          <oc:size>99</oc:size>
          <d:getetag>"right"</d:getetag>
          <x:resourcetype><x:collection/></x:resourcetype>
          <d:resourcetype/>
        </d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>
        </d:response>
        </d:multistatus>
        """
        let r = try parse(xml)
        XCTAssertEqual(r.count, 1)
        XCTAssertEqual(r[0].etag, "\"right\"")
        XCTAssertFalse(r[0].isCollection)
    }

    /// WsgiDAV's shape: `ns0:` prefixes, and `getetag` without the quotes its `ETag` header
    /// has (quoted here, so a listing and a HEAD give one file one version).
    func testWsgiDAVUnquotedETagIsQuoted() throws {
        let xml = """
        <?xml version="1.0" encoding="utf-8" ?>
        <ns0:multistatus xmlns:ns0="DAV:"><ns0:response><ns0:href>/a.txt</ns0:href><ns0:propstat><ns0:prop>\
        <ns0:resourcetype /><ns0:getcontentlength>3</ns0:getcontentlength>\
        <ns0:getetag>1549698-1795708301-3</ns0:getetag></ns0:prop><ns0:status>HTTP/1.1 200 OK</ns0:status>\
        </ns0:propstat></ns0:response></ns0:multistatus>
        """
        let r = try parse(xml)
        XCTAssertEqual(r.first?.etag, "\"1549698-1795708301-3\"")
    }

    /// The time favfs keeps as a dead property comes back from a listing; a 403 propstat for
    /// it (a server without dead properties) leaves nothing.
    /// A PROPPATCH's answer names the property it stored in a 2xx propstat (Apache's shape, its
    /// own prefix for favfs's namespace); one it refused, in a 403 or 409 propstat.
    func testAProppatchAnswerSaysWhetherTheTimeWasStored() throws {
        func answer(_ status: String) -> String {
            """
            <?xml version="1.0" encoding="utf-8"?>
            <D:multistatus xmlns:D="DAV:" xmlns:ns1="urn:x-favfs:">
            <D:response><D:href>/files/a.txt</D:href>
            <D:propstat><D:prop><ns1:mtime/></D:prop><D:status>HTTP/1.1 \(status)</D:status></D:propstat>
            </D:response></D:multistatus>
            """
        }
        XCTAssertEqual(try parse(answer("200 OK")).map(\.keptModifiedNamed), [true])
        XCTAssertEqual(try parse(answer("403 Forbidden")).map(\.keptModifiedNamed), [false])
        XCTAssertEqual(try parse(answer("409 Conflict")).map(\.keptModifiedNamed), [false])
        XCTAssertEqual(try parse(answer("200 OK")).map(\.keptModified), [nil], "an empty element is no time")
    }

    func testKeptModifiedTimeProperty() throws {
        let xml = """
        <?xml version="1.0" encoding="utf-8"?>
        <D:multistatus xmlns:D="DAV:" xmlns:F="urn:x-favfs:">
        <D:response><D:href>/f/a</D:href>
        <D:propstat><D:prop><D:getetag>"e1"</D:getetag><F:mtime>1609459200.123456789 "e1"</F:mtime></D:prop>
        <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
        <D:response><D:href>/f/b</D:href>
        <D:propstat><D:prop><D:getetag>"e2"</D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>
        <D:propstat><D:prop><F:mtime>1.000000000 "e2"</F:mtime></D:prop><D:status>HTTP/1.1 403 Forbidden</D:status></D:propstat>
        </D:response>
        </D:multistatus>
        """
        let r = try parse(xml)
        XCTAssertEqual(r[0].keptModified, "1609459200.123456789 \"e1\"")
        XCTAssertNil(r[1].keptModified)
        let a = WebDAVListing.item(from: r[0], identifier: ItemIdentifier("/f/a"))
        XCTAssertEqual(a.modifiedTime, Timestamp(seconds: 1_609_459_200, nanoseconds: 123_456_789))
        // Bound to the version it was set on: new content brings the server's time back.
        var changed = r[0]
        changed.etag = "\"e9\""
        changed.lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
        XCTAssertEqual(WebDAVListing.item(from: changed, identifier: ItemIdentifier("/f/a")).modifiedTime?.seconds, 784_111_777)
        // Set while Apache's tag was weak (within a second of the upload), listed strong.
        var weak = r[0]
        weak.keptModified = "1609459200.123456789 W/\"e1\""
        XCTAssertEqual(WebDAVListing.item(from: weak, identifier: ItemIdentifier("/f/a")).modifiedTime,
                       Timestamp(seconds: 1_609_459_200, nanoseconds: 123_456_789))
        XCTAssertNil(WebDAVModifiedTime(property: "garbage"))
        XCTAssertNil(WebDAVModifiedTime(property: "12.5 \"e1\""), "nine digits of nanoseconds, as favfs writes them")
        XCTAssertEqual(WebDAVModifiedTime(property: WebDAVModifiedTime(time: Timestamp(seconds: -5, nanoseconds: 7), version: "\"v\"").propertyValue)?.time,
                       Timestamp(seconds: -5, nanoseconds: 7))
    }

    func testQuotaPropertiesAndResponseLevelStatus() throws {
        let xml = """
        <D:multistatus xmlns:D="DAV:">
        <D:response><D:href>/files/</D:href>
        <D:propstat><D:prop><D:quota-available-bytes>1000</D:quota-available-bytes><D:quota-used-bytes>24</D:quota-used-bytes></D:prop>
        <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
        <D:response><D:href>/files/gone</D:href><D:status>HTTP/1.1 404 Not Found</D:status></D:response>
        </D:multistatus>
        """
        let r = try parse(xml)
        XCTAssertEqual(r[0].quotaAvailableBytes, 1000)
        XCTAssertEqual(r[0].quotaUsedBytes, 24)
        XCTAssertEqual(r[1].status, 404)
    }

    func testEscapedXMLEntitiesInHref() throws {
        let xml = #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/files/a&amp;b%3Bc</D:href></D:response></D:multistatus>"#
        let r = try parse(xml)
        XCTAssertEqual(WebDAVPaths(baseURL: "http://h/files/").relation(ofHref: r[0].href, to: .rootContainer), .child(name: "a&b;c"))
    }

    func testMalformedBodiesAreErrors() {
        XCTAssertThrowsError(try parse(#"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/x</D:href></D:multistatus>"#)) { e in
            XCTAssertTrue("\(e)".contains("malformed XML"), "\(e)")
        }
        // libxml2's code in words, with the place; never Foundation's "NSXMLParserErrorDomain error 76".
        XCTAssertThrowsError(try parse(#"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/x</D:href></D:propstat></D:response></D:multistatus>"#)) { e in
            XCTAssertTrue("\(e)".contains("line 1, column"), "\(e)")
            XCTAssertTrue("\(e)".contains("(libxml2 error "), "\(e)")
            XCTAssertFalse("\(e)".contains("NSXMLParserErrorDomain"), "\(e)")
        }
        let bomb = #"<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "&b;"><!ENTITY b "&a;">]><D:multistatus xmlns:D="DAV:">&a;</D:multistatus>"#
        XCTAssertThrowsError(try parse(bomb)) { e in
            XCTAssertTrue("\(e)".contains("libxml2 error"), "\(e)")
            XCTAssertFalse("\(e)".contains("NSXMLParserErrorDomain"), "\(e)")
        }
        XCTAssertThrowsError(try parse("<html><body>Login</body></html>")) { e in
            XCTAssertTrue("\(e)".contains("multistatus"), "\(e)")
        }
        XCTAssertThrowsError(try parse(#"<D:multistatus xmlns:D="DAV:"><D:response><D:propstat/></D:response></D:multistatus>"#)) { e in
            XCTAssertTrue("\(e)".contains("without an href"), "\(e)")
        }
        XCTAssertThrowsError(try parse(""))
        // Cut off mid-body (a server or proxy that died), with the place and libxml2's word for it.
        XCTAssertThrowsError(try parse(#"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/x</D:hr"#)) { e in
            XCTAssertTrue("\(e)".contains("malformed XML at line 1"), "\(e)")
        }
        // Billion laughs: entities a DTD declares are never expanded.
        let laughs = #"<?xml version="1.0"?><!DOCTYPE m [<!ENTITY l "lol"><!ENTITY l2 "&l;&l;&l;&l;&l;&l;&l;&l;&l;&l;">]>"#
            + #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>&l2;</D:href></D:response></D:multistatus>"#
        XCTAssertThrowsError(try parse(laughs)) { e in XCTAssertTrue("\(e)".contains("undeclared entity"), "\(e)") }
    }

    /// A body far larger than one read of the stream: responses and names cut between reads
    /// come out whole.
    func testALargeBodyParsesAcrossReads() throws {
        let name = String(repeating: "ü", count: 40)
        var xml = #"<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:">"#
        for i in 0..<6_000 {
            xml += "<D:response><D:href>/files/\(name)-\(i)</D:href><D:propstat><D:prop><D:getcontentlength>\(i)</D:getcontentlength>"
                + "<D:getetag>\"e\(i)\"</D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
        }
        xml += "</D:multistatus>"
        XCTAssertGreaterThan(xml.utf8.count, 1 << 20)
        let r = try parse(xml)
        XCTAssertEqual(r.count, 6_000)
        XCTAssertEqual(r.map(\.href), (0..<6_000).map { "/files/\(name)-\($0)" })
        XCTAssertEqual(r.map(\.contentLength), (0..<6_000).map { Int64($0) })
        XCTAssertEqual(r.last?.etag, "\"e5999\"")
    }
}

/// URL encoding, href matching and HTTP dates.
final class WebDAVPathsTests: XCTestCase {
    func testStrictEncoding() {
        XCTAssertEqual(WebDAVPaths.encode("aZ09-._~"), "aZ09-._~")
        XCTAssertEqual(WebDAVPaths.encode("a b#?%+'&;:=@,\t"), "a%20b%23%3F%25%2B%27%26%3B%3A%3D%40%2C%09")
        XCTAssertEqual(WebDAVPaths.encode("ü☃"), "%C3%BC%E2%98%83")
        let p = WebDAVPaths(baseURL: "http://h:1/files")
        XCTAssertEqual(p.url(for: .rootContainer, isFolder: true), "http://h:1/files/")
        XCTAssertEqual(p.url(for: ItemIdentifier("/a b/c?d"), isFolder: false), "http://h:1/files/a%20b/c%3Fd")
        XCTAssertEqual(p.url(for: ItemIdentifier("/a b"), isFolder: true), "http://h:1/files/a%20b/")
    }

    func testHrefRelations() {
        let p = WebDAVPaths(baseURL: "http://h:1/files/")
        let folder = ItemIdentifier("/x y")
        XCTAssertEqual(p.relation(ofHref: "/files/x%20y", to: folder), .itself)
        XCTAssertEqual(p.relation(ofHref: "/files/x%20y/", to: folder), .itself)
        XCTAssertEqual(p.relation(ofHref: "http://h:1/files/x%20y/z+1", to: folder), .child(name: "z+1"))
        XCTAssertEqual(p.relation(ofHref: "/files/x%20y/a%2Fb", to: folder), .child(name: "a/b"))
        XCTAssertEqual(p.relation(ofHref: "/files/x%20y/a/b", to: folder), .unrelated)
        XCTAssertEqual(p.relation(ofHref: "/other/x%20y/a", to: folder), .unrelated)
        XCTAssertEqual(p.relation(ofHref: "/files/x%20y/%ZZ", to: folder), .unrelated)
        XCTAssertEqual(p.relation(ofHref: "/files/x%20y/%2", to: folder), .unrelated, "an escape cut short")
        XCTAssertEqual(p.relation(ofHref: "/files/x%20y/%C3%28", to: folder), .unrelated, "decodes to bytes that are not UTF-8")
        XCTAssertEqual(p.relation(ofHref: "\r\n  /files//x%20y//n%C3%A9?q=1#f \t", to: folder), .child(name: "né"))
        XCTAssertEqual(p.relation(ofHref: "/files/x%20y/ünï cödé", to: folder), .child(name: "ünï cödé"), "raw UTF-8")
        XCTAssertEqual(p.relation(ofHref: "http://h:1", to: .rootContainer), .unrelated, "no path: not under /files")
        XCTAssertEqual(WebDAVPaths(baseURL: "http://h:1").relation(ofHref: "https://other:2", to: .rootContainer), .itself)
        XCTAssertEqual(WebDAVPaths.segments(ofHref: "http://h:1/a://b/c"), ["a:", "b", "c"], "only the first :// is the scheme's")
        XCTAssertEqual(" \t a b \r\n".trimmingWhitespace(), "a b")
        XCTAssertEqual(" \n ".trimmingWhitespace(), "")
    }

    func testHTTPDates() {
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPDate.parse("Sun Nov  6 08:49:37 1994"), 784_111_777)
        XCTAssertEqual(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT"), 0)
        XCTAssertEqual(HTTPDate.parse("Thu, 29 Feb 2024 12:00:00 GMT"), 1_709_208_000)
        XCTAssertNil(HTTPDate.parse("yesterday"))
        XCTAssertNil(HTTPDate.parse("Sun, 06 Foo 1994 08:49:37 GMT"))
        // The 29-byte form is read from its bytes; near misses are refused or go the general way.
        XCTAssertEqual(HTTPDate.parse("Sun, 06 NOV 1994 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 UTC"), 784_111_777)
        XCTAssertEqual(HTTPDate.parse("Sun,  6 Nov 1994 08:49:37 GMT"), 784_111_777)
        XCTAssertNil(HTTPDate.parse("Sun, 06 Nov 1994 08:49:3x GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 06 Nov 1994 08-49-37 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 0é Nov 1994 08:49:37 GMT"))
    }
}

/// Turning a parsed Depth 1 listing into a page.
final class WebDAVListingTests: XCTestCase {
    func testUnservableNamesAreSkippedAndReported() throws {
        let long = String(repeating: "x", count: 256)
        let xml = """
        <D:multistatus xmlns:D="DAV:">
        <D:response><D:href>/files/dir/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop>
          <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
        <D:response><D:href>/files/dir/ok%20name</D:href><D:propstat><D:prop><D:resourcetype/><D:getcontentlength>3</D:getcontentlength>
          <D:getetag>"e1"</D:getetag><D:getlastmodified>Thu, 01 Jan 1970 00:01:00 GMT</D:getlastmodified></D:prop>
          <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
        <D:response><D:href>/files/dir/sub/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop>
          <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
        <D:response><D:href>/files/dir/a%2Fb</D:href></D:response>
        <D:response><D:href>/files/dir/%2E%2E</D:href></D:response>
        <D:response><D:href>/files/dir/nul%00</D:href></D:response>
        <D:response><D:href>/files/dir/\(long)</D:href></D:response>
        <D:response><D:href>/files/dir/sub/deeper</D:href></D:response>
        <D:response><D:href>/elsewhere/x</D:href></D:response>
        </D:multistatus>
        """
        let resources = try Multistatus.parse(Data(xml.utf8))
        let folder = ItemIdentifier("/dir")
        let page = try WebDAVListing.page(from: resources, folder: folder, paths: WebDAVPaths(baseURL: "http://h/files/"),
                                          errors: WebDAVErrors(remote: "dav://h/files"))
        XCTAssertEqual(page.items, [
            Item(identifier: ItemIdentifier("/dir/ok name"), kind: .file, size: 3, modified: 60, version: "\"e1\""),
            Item(identifier: ItemIdentifier("/dir/sub"), kind: .folder),
        ])
        XCTAssertEqual(page.skipped.map(\.problem), [.slash, .dot, .nul, .tooLong])
        XCTAssertEqual(page.skipped.first?.name, "a/b")
        XCTAssertNil(page.nextPage)
    }

    func testAFileListedAsTheFolderIsNotAFolder() throws {
        let xml = #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/files/f</D:href><D:propstat><D:prop><D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>"#
        XCTAssertThrowsError(try WebDAVListing.page(from: try Multistatus.parse(Data(xml.utf8)), folder: ItemIdentifier("/f"),
                                                    paths: WebDAVPaths(baseURL: "http://h/files/"),
                                                    errors: WebDAVErrors(remote: "dav://h/files"))) { e in
            XCTAssertEqual((e as? ProviderError)?.kind, .notAFolder)
            XCTAssertEqual((e as? ProviderError)?.path, "/f")
        }
    }

    /// A method the server does not allow (405, 501) is refused for good, named, and never
    /// retried as if the server were in trouble; a 405 that means something else for one method
    /// (MKCOL: the folder exists) keeps that meaning.
    func testAMethodTheServerDoesNotAllowIsRefusedForGood() {
        let errors = WebDAVErrors(remote: "dav://h/files")
        let put = errors.status(405, method: "PUT", path: "/a.txt")
        XCTAssertEqual(put.kind, .notSupported)
        XCTAssertFalse(put.isTransient)
        XCTAssertEqual(put.detail, "PUT failed: 405 Method Not Allowed (the server does not allow PUT here)")
        XCTAssertEqual(errors.status(501, method: "MOVE", path: "/a").kind, .notSupported)
        let mkcol = errors.status(405, method: "MKCOL", path: "/made", meaning: [405: .exists])
        XCTAssertEqual(mkcol.kind, .exists)
        XCTAssertEqual(mkcol.detail, "MKCOL failed: 405 Method Not Allowed")
        XCTAssertEqual(errors.status(503, method: "PUT", path: "/a").kind, .serverError)
    }

    /// Apache answers a path its disk cannot hold (ENAMETOOLONG there) with a plain 403: a path
    /// that long is reported as too long (ENAMETOOLONG), a short one as denied (EACCES).
    func testA403ForAPathTooLongForTheServersDiskIsNameTooLong() {
        let errors = WebDAVErrors(remote: "dav://h/files")
        let deep = String(repeating: "/" + String(repeating: "c", count: 127), count: 31)
        let mkcol = errors.status(403, method: "MKCOL", path: deep)
        XCTAssertEqual(mkcol.kind, .nameTooLong)
        XCTAssertTrue(mkcol.detail.contains("\(deep.utf8.count) bytes"), mkcol.detail)
        XCTAssertEqual(errors.status(403, method: "PUT", path: "/" + String(repeating: "n", count: 256)).kind, .nameTooLong)
        XCTAssertEqual(errors.status(403, method: "PUT", path: "/a/b.txt").kind, .denied)
        XCTAssertEqual(errors.status(401, method: "PUT", path: deep).kind, .denied)
    }
}
