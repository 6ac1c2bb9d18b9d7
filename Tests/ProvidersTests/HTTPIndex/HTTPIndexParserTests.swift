import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers

/// The index page parser on pages captured from real Apache, nginx and python servers, and on
/// hand-written links for the edge cases.
final class HTTPIndexParserTests: XCTestCase {
    static let files: Set<String> = [
        "\"quote\"", "#hash", "100%", "<lt>", "=eq", "a b", "a&b", "a+b",
        "averyveryveryverylongnamethatapachewilltruncateinthelisting.txt", "big.bin", "co:lon", "empty", "it's",
        "semi;colon", "tab\there", "trailing dots...", "what?", "ünïcödé ☃",
    ]
    static let folders: Set<String> = ["dir a&b", "sub", "ünï ☃ dir"]
    static let apacheFolder = "http://127.0.0.1:18971/files/"

    private func parse(_ html: String, _ folderURL: String) -> IndexPage {
        HTTPIndexParser.parse(Array(html.utf8), folderURL: folderURL)
    }

    private func checkNames(_ page: IndexPage, _ server: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(Set(page.entries.filter { !$0.isFolder }.map(\.name)), Self.files, "\(server) files", file: file, line: line)
        XCTAssertEqual(Set(page.entries.filter(\.isFolder).map(\.name)), Self.folders, "\(server) folders", file: file, line: line)
        XCTAssertEqual(page.entries.count, Self.files.count + Self.folders.count, "\(server): no duplicates", file: file, line: line)
        XCTAssertTrue(page.skipped.isEmpty && page.undecodable.isEmpty, "\(server): \(page.skipped) \(page.undecodable)", file: file, line: line)
    }

    func testApachePlainList() {
        checkNames(parse(IndexPageFixtures.apachePlain, Self.apacheFolder), "apache plain")
    }

    func testApacheFancyPreformatted() {
        let page = parse(IndexPageFixtures.apacheFancyPre, Self.apacheFolder)
        checkNames(page, "apache fancy <pre>")
        // Apache's columns are local time and rounded sizes: never taken.
        XCTAssertTrue(page.entries.allSatisfy { $0.exactSize == nil && $0.modifiedMinute == nil })
    }

    func testApacheFancyTable() {
        let page = parse(IndexPageFixtures.apacheTable, Self.apacheFolder)
        checkNames(page, "apache table")
        XCTAssertTrue(page.entries.allSatisfy { $0.exactSize == nil && $0.modifiedMinute == nil })
    }

    func testApacheTableWithIconLinksListsEachNameOnce() {
        checkNames(parse(IndexPageFixtures.apacheTableIcons, Self.apacheFolder), "apache table with icon links")
    }

    func testApacheTruncatedDisplayNameUsesHref() {
        XCTAssertTrue(IndexPageFixtures.apacheTable.contains("averyveryveryverylon..&gt;"), "fixture shows a truncated name")
        let names = parse(IndexPageFixtures.apacheTable, Self.apacheFolder).entries.map(\.name)
        XCTAssertTrue(names.contains("averyveryveryverylongnamethatapachewilltruncateinthelisting.txt"))
        XCTAssertFalse(names.contains { $0.contains("..>") })
    }

    func testNginxExactSizesAndDates() throws {
        let page = parse(IndexPageFixtures.nginxCRLF, "http://127.0.0.1:18973/files/")
        checkNames(page, "nginx")
        let byName = Dictionary(uniqueKeysWithValues: page.entries.map { ($0.name, $0) })
        XCTAssertEqual(byName["big.bin"]?.exactSize, 1500)
        XCTAssertEqual(byName["empty"]?.exactSize, 0)
        XCTAssertEqual(byName["ünïcödé ☃"]?.exactSize, Int64("content of ünïcödé ☃\n".utf8.count))
        XCTAssertEqual(byName["tab\there"]?.exactSize, 20)
        XCTAssertEqual(byName["sub"]?.exactSize, nil, "folders have no size")
        // 21-Nov-2026 07:47 GMT
        XCTAssertEqual(byName["big.bin"]?.modifiedMinute, 1_795_247_220)
        XCTAssertTrue(page.entries.allSatisfy { $0.modifiedMinute == 1_795_247_220 })
        XCTAssertTrue(page.entries.filter { !$0.isFolder }.allSatisfy { $0.exactSize != nil })
    }

    func testPythonNamesOnly() {
        let page = parse(IndexPageFixtures.python, "http://127.0.0.1:18972/")
        checkNames(page, "python")
        XCTAssertTrue(page.entries.allSatisfy { $0.exactSize == nil && $0.modifiedMinute == nil })
    }

    /// Apache and python encode names differently ("a&amp;b" vs "a%26b", "./co:lon" vs "co%3Alon",
    /// lowercase vs uppercase hex); both give the same names.
    func testApacheAndPythonEncodingsAgree() {
        XCTAssertTrue(IndexPageFixtures.apachePlain.contains(#"href="a&amp;b""#))
        XCTAssertTrue(IndexPageFixtures.python.contains(#"href="a%26b""#))
        XCTAssertTrue(IndexPageFixtures.apachePlain.contains(#"href="./co:lon""#))
        XCTAssertTrue(IndexPageFixtures.python.contains(#"href="co%3Alon""#))
        let apache = parse(IndexPageFixtures.apachePlain, Self.apacheFolder).entries
        let python = parse(IndexPageFixtures.python, "http://127.0.0.1:18972/").entries
        XCTAssertEqual(apache.map(\.name).sorted(), python.map(\.name).sorted())
    }

    func testLinkFiltering() {
        let folder = "http://example.test:8080/pub/data/"
        let html = """
        <a href="?C=N;O=D">Name</a> <a href="/">Parent Directory</a> <a href="../">up</a> <a href="./">here</a>
        <a href="#top">top</a> <a href="http://other.test/pub/data/x">other host</a> <a href="https://example.test:8080/pub/data/y">other scheme</a>
        <a href="mailto:a@b">mail</a> <a href="javascript:void(0)">js</a> <a href="sub/deeper">deeper</a> <a href="/pub/other/z">elsewhere</a>
        <a href="/pub/data/sub/deeper">deeper absolute</a> <a href="x?download=1">query</a> <a>no href</a> <abbr href="no">abbr</abbr>
        <a href="http://EXAMPLE.test:8080/pub/data/abs">same origin</a> <a href="/pub/%64ata/abs%20path/">absolute folder</a>
        <a href="//example.test:8080/pub/data/netpath">network path</a>
        <A HREF=bare.txt>bare</A> <a class="x" href = 'single&#39;s' title="t">single quotes</a> <a href="./dot/">dot folder</a>
        <a href="&#x263A;%20smile">entity hex</a> <a href="%2Fslash">encoded slash</a> <a href="bad%FF">not utf-8</a> <a href="bad%zz">bad escape</a>
        <a href="..">dotdot</a> <a href="%2E%2E">encoded dotdot</a>
        """
        let page = parse(html, folder)
        XCTAssertEqual(page.entries.map(\.name), ["abs", "abs path", "netpath", "bare.txt", "single's", "dot", "☺ smile"])
        XCTAssertEqual(page.entries.map(\.isFolder), [false, true, false, false, false, true, false])
        XCTAssertEqual(page.skipped.map(\.name), ["/slash", ".."])
        XCTAssertEqual(page.skipped.map(\.problem), [.slash, .dot])
        XCTAssertEqual(page.undecodable, ["bad%FF", "bad%zz"])
    }

    func testEntities() {
        XCTAssertEqual(HTMLEntities.decode("a&amp;b&lt;c&gt;&quot;d&quot;&#39;e&apos;&#65;&#x42;"), "a&b<c>\"d\"'e'AB")
        XCTAssertEqual(HTMLEntities.decode("&unknown; & &amp &#0; &#xZZ;"), "&unknown; & &amp &#0; &#xZZ;")
    }

    func testNginxColumns() {
        XCTAssertEqual(NginxColumns.parse("    21-Nov-2026 07:47                1500"), .init(size: 1500, modified: 1_795_247_220))
        XCTAssertEqual(NginxColumns.parse(" 01-Jan-1970 00:01   -"), .init(size: nil, modified: 60))
        XCTAssertEqual(NginxColumns.parse(" 01-Jan-1970 00:01   17\r"), .init(size: 17, modified: 60))
        XCTAssertEqual(NginxColumns.parse(" 01-Jan-2000 00:00   2K"), .init(size: nil, modified: 946_684_800))
        XCTAssertNil(NginxColumns.parse("  2026-11-21 07:47  1.5K  "), "Apache's columns are not read")
        XCTAssertNil(NginxColumns.parse(""))
    }

    func testLargePageParsesQuickly() {
        var html = "<html><body><pre><a href=\"../\">../</a>\n"
        for i in 0..<20_000 {
            html += "<a href=\"file%20\(i).txt\">file \(i).txt</a>                 21-Nov-2026 07:47                \(i)\n"
        }
        let start = Date()
        let page = parse(html, "http://h/x/")
        let took = Date().timeIntervalSince(start)
        XCTAssertEqual(page.entries.count, 20_000)
        XCTAssertEqual(page.entries.last?.exactSize, 19_999)
        print("parsed 20,000 links in \(String(format: "%.3f", took)) s")
        XCTAssertLessThan(took, 5)
    }

    // MARK: versions

    func testVersions() {
        XCTAssertEqual(HTTPIndexVersion.make(size: 5, modified: 100.7, etag: "\"abc\"", metadata: .head), "\"abc\"")
        XCTAssertEqual(HTTPIndexVersion.make(size: 5, modified: 100.7, etag: "W/\"abc\"", metadata: .head), "size=5;modified=100")
        XCTAssertEqual(HTTPIndexVersion.make(size: 5, modified: 130, etag: "\"abc\"", metadata: .index), "size=5;modified=120")
        XCTAssertNil(HTTPIndexVersion.make(size: 5, modified: nil, etag: nil, metadata: .head))
        XCTAssertEqual(HTTPIndexVersion.pin("\"abc\""), .etag("\"abc\""))
        XCTAssertEqual(HTTPIndexVersion.pin("size=5;modified=100"), .sizeAndModified(size: 5, modified: 100))
        XCTAssertEqual(HTTPIndexVersion.pin(nil), .none)

        func response(_ status: Int, _ headers: [String: String]) -> CurlResponse {
            CurlResponse(status: status, headers: headers, body: Data())
        }
        let pin = HTTPIndexVersion.Pin.sizeAndModified(size: 1500, modified: 1_795_247_221)
        let lm = "Sat, 21 Nov 2026 07:47:01 GMT"
        XCTAssertNil(HTTPIndexVersion.mismatch(pin, response: response(206, ["content-range": "bytes 0-9/1500", "last-modified": lm]), metadata: .head))
        XCTAssertNotNil(HTTPIndexVersion.mismatch(pin, response: response(206, ["content-range": "bytes 0-9/1501", "last-modified": lm]), metadata: .head))
        XCTAssertNotNil(HTTPIndexVersion.mismatch(pin, response: response(200, ["content-length": "1500", "last-modified": "Sat, 21 Nov 2026 07:47:02 GMT"]), metadata: .head))
        XCTAssertNil(HTTPIndexVersion.mismatch(pin, response: response(200, ["content-length": "1500"]), metadata: .head))
        let minute = HTTPIndexVersion.Pin.sizeAndModified(size: 1500, modified: 1_795_247_220)
        XCTAssertNil(HTTPIndexVersion.mismatch(minute, response: response(206, ["content-range": "bytes 0-9/1500", "last-modified": lm]), metadata: .index))
        XCTAssertNotNil(HTTPIndexVersion.mismatch(.etag("\"a\""), response: response(206, ["etag": "\"b\""]), metadata: .head))
        XCTAssertEqual(HTTPIndexVersion.httpDate(1_795_247_221), lm)
    }
}
