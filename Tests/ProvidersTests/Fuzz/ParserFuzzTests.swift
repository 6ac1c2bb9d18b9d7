import Foundation
import Logging
import XCTest
import FavFSCore
@testable import Providers
import TestSupport

/// Every parser that reads bytes a server (or a hand-edited remotes.toml) sends, fed seeded
/// random and mutated inputs: no crash, no trap, no hang, and what comes out stays sane (no
/// negative sizes, names that validate). A trap ends the whole test process, which is the
/// failure this guards against. `FAVFS_FUZZ_INPUTS` changes the count per parser.
final class ParserFuzzTests: XCTestCase {
    private var inputs: Int { ProcessInfo.processInfo.environment["FAVFS_FUZZ_INPUTS"].flatMap { Int($0) } ?? 20000 }
    private let log = Logger(label: "favfs.fuzz")

    /// Runs `body` on `inputs` mutations of the samples and reports the count and time.
    private func fuzz(_ name: String, seed: UInt64, samples: [String], file: StaticString = #filePath, line: UInt = #line,
                      _ body: (Data) throws -> Void) {
        var mutator = Mutator(seed: seed, samples: samples.map { Array($0.utf8) })
        let started = Date()
        var slowest = 0.0
        // FAVFS_FUZZ_LAST=FILE keeps the input being parsed, to replay the one that crashed.
        let keep = ProcessInfo.processInfo.environment["FAVFS_FUZZ_LAST"]
        for _ in 0..<inputs {
            let input = Data(mutator.next())
            if let keep { try? input.write(to: URL(fileURLWithPath: keep)) }
            let t = Date()
            _ = try? body(input)
            slowest = max(slowest, Date().timeIntervalSince(t))
        }
        let total = Date().timeIntervalSince(started)
        print("fuzz \(name): \(inputs) inputs (seed \(seed)) in \(String(format: "%.2f", total)) s, slowest \(String(format: "%.3f", slowest)) s")
        // A generous bound: a parser that is quadratic on some input would blow it.
        XCTAssertLessThan(slowest, 5, "\(name): one input took \(slowest) s", file: file, line: line)
    }

    /// Failures already reported (one per parser and kind is enough to act on).
    private var reported: Set<String> = []

    private func checkSane(_ items: [Item], _ what: String) {
        for item in items {
            if item.size < 0, reported.insert("\(what) size").inserted {
                XCTFail("\(what): negative size \(item.size) for \(item.identifier.rawValue.debugDescription)")
            }
            if ItemIdentifier.validate(name: item.name) != nil, reported.insert("\(what) name").inserted {
                XCTFail("\(what): a name that cannot be served: \(item.name.debugDescription)")
            }
        }
    }

    func testWebDAVMultistatus() {
        let sample = """
        <?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:"><D:response><D:href>/files/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response><D:response><D:href>/files/a%20b.txt</D:href><D:propstat><D:prop><D:resourcetype/><D:getcontentlength>9223372036854775807</D:getcontentlength><D:getlastmodified>Mon, 23 Nov 2026 10:00:00 GMT</D:getlastmodified><D:getetag>"1-2"</D:getetag><D:quota-available-bytes>-1</D:quota-available-bytes></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response><D:response><D:href>/files/../x</D:href><D:propstat><D:prop><D:getcontentlength>-5</D:getcontentlength></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>
        """
        let paths = WebDAVPaths(baseURL: "http://127.0.0.1:1/files/")
        let errors = WebDAVErrors(remote: "dav://127.0.0.1:1/files/")
        fuzz("WebDAV multistatus", seed: 1, samples: [sample]) { data in
            let resources = try Multistatus.parse(data)
            let page = try WebDAVListing.page(from: resources, folder: .rootContainer, paths: paths, errors: errors, log: log)
            checkSane(page.items, "WebDAV")
        }
    }

    func testS3ListObjects() {
        let sample = """
        <?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated><NextContinuationToken>tok</NextContinuationToken><Contents><Key>p/a.txt</Key><LastModified>2026-11-23T10:00:00.000Z</LastModified><ETag>&quot;abc&quot;</ETag><Size>12</Size></Contents><Contents><Key>p/x/../y</Key><Size>-3</Size></Contents><CommonPrefixes><Prefix>p/sub/</Prefix></CommonPrefixes></ListBucketResult>
        """
        fuzz("S3 ListObjectsV2", seed: 2, samples: [sample, "<Error><Code>NoSuchKey</Code><Message>m</Message></Error>"]) { data in
            _ = S3XML.parseError(data)
            _ = S3XML.parseFlat(data)
            let listed = try S3XML.parseList(data)
            checkSane(S3Listing.page(from: listed, folder: .rootContainer, prefix: "p/", remote: "s3://b/p", log: log).items, "S3")
        }
    }

    func testFTPListings() {
        let list = """
        drwxr-xr-x   2 ftp ftp     4096 Nov 23 10:00 folder
        -rw-r--r--   1 ftp ftp 9223372036854775807 Jan  1  1970 huge
        lrwxrwxrwx   1 ftp ftp       11 Feb 29 12:00 link -> target
        11-23-26  10:00AM       <DIR>          dosdir
        11-23-26  10:00PM                 1234 dos.txt
        total 12
        """
        let mlsd = """
        type=cdir;modify=20261123100000;perm=el; .
        type=file;size=12;modify=20261123100000.123;unique=801U1;UNIX.mode=0644; a file.txt
        type=dir;modify=99999999999999; sub
        type=OS.unix=symlink;size=-4; link
        """
        fuzz("FTP LIST", seed: 3, samples: [list]) { data in
            checkSane(FTPListing.parse(data, now: Date(timeIntervalSince1970: 1_800_000_000)).compactMap { $0.item(ItemIdentifier.rootContainer.child($0.name)) }
                .filter { ItemIdentifier.validate(name: $0.name) == nil }, "FTP LIST")
        }
        fuzz("FTP MLSD", seed: 4, samples: [mlsd]) { data in
            checkSane(FTPMachineListing.parse(data).compactMap { $0.item(ItemIdentifier.rootContainer.child($0.name)) }
                .filter { ItemIdentifier.validate(name: $0.name) == nil }, "FTP MLSD")
        }
    }

    func testSFTPLongNames() {
        let sample = """
        -rw-r--r--    1 root     root         1234 Nov 23 10:00 a file.txt
        drwxr-xr-x    2 1000     1000         4096 Jan  1  1970 dir
        lrwxrwxrwx    1 root     root           11 Feb 29 12:00 link -> target
        crw-rw-rw-    1 root     root       1,   3 Nov 23 10:00 null
        """
        fuzz("SFTP long names", seed: 5, samples: [sample]) { data in
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") { _ = SFTPLongName.parse(line) }
        }
    }

    func testHTTPIndexPages() {
        let apache = """
        <html><head><title>Index of /files</title></head><body><h1>Index of /files</h1><table><tr><th><a href="?C=N;O=D">Name</a></th></tr><tr><td><a href="/files/">Parent Directory</a></td></tr><tr><td><a href="a%20b.txt">a b.txt</a></td><td align="right">2026-11-23 10:00  </td><td align="right"> 12K</td></tr><tr><td><a href="sub/">sub/</a></td></tr><tr><td><a href="../x">x</a></td></tr><tr><td><a href="http://elsewhere/y">y</a></td></tr></table></body></html>
        """
        let nginx = """
        <html><head><title>Index of /files/</title></head><body><h1>Index of /files/</h1><hr><pre><a href="../">../</a>
        <a href="a.txt">a.txt</a>                                              23-Nov-2026 10:00                  12
        <a href="sub/">sub/</a>                                               23-Nov-2026 10:00                   -
        <a href="%E2%82%AC&amp;.txt">&euro;&amp;.txt</a>                        23-Nov-2026 10:00  9223372036854775807
        </pre><hr></body></html>
        """
        fuzz("HTTP index pages", seed: 6, samples: [apache, nginx]) { data in
            _ = HTTPIndexParser.parse(Array(data), folderURL: "http://127.0.0.1:1/files/")
        }
    }

    func testFavartJSON() {
        let sample = #"[{"name": "a.jpg", "size": 12}, {"name": "folder", "size": 4096}, {"name": "../x.png", "size": -1}, {"name": "b.PNG", "size": 1e300}, {"name": "c.jpeg"}]"#
        fuzz("Favart JSON", seed: 7, samples: [sample, #"{"error": "no"}"#]) { data in
            let entries = try FavartListing.parse(data)
            checkSane(FavartListing.page(entries, folder: .rootContainer, remote: "favart://127.0.0.1:1", log: log).items, "Favart")
        }
    }

    func testRemotesTOML() {
        let sample = """
        # remotes
        [remotes.nas]
        url = "dav://me@nas.local:8080/files/"
        default = true
        [remotes.nas.options]
        "known_hosts" = "~/.ssh/known_hosts"
        quoted = "a \\"b\\" \\u00e9 \\n"
        [remotes.b]
        url = 's3://bucket/prefix'
        """
        fuzz("remotes.toml", seed: 8, samples: [sample]) { data in
            _ = try RemotesTOML.parse(String(decoding: data, as: UTF8.self))
        }
    }

    func testHTTPDates() {
        fuzz("HTTP dates", seed: 9, samples: ["Mon, 23 Nov 2026 10:00:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
                                              "2026-11-23T10:00:00.123Z"]) { data in
            let s = String(decoding: data, as: UTF8.self)
            _ = HTTPDate.parse(s)
            _ = S3Time.parseISO8601(s)
        }
    }
}

/// Seeded inputs: a sample as it is, or mutated (bytes flipped, inserted, deleted, chunks
/// duplicated or cut, numbers replaced by extreme ones), or random bytes.
struct Mutator {
    private var rng: SeededRandom
    private let samples: [[UInt8]]
    private static let extremes = ["9223372036854775807", "-9223372036854775808", "18446744073709551616", "-1", "0",
                                   "1e308", "NaN", "99999999999999999999999", "%00", "%2F", "..", "/", "\u{0}", "&#0;",
                                   String(repeating: "a", count: 300), "<![CDATA[", "]]>", "\"", "\\", "\n", "\t"].map { Array($0.utf8) }

    init(seed: UInt64, samples: [[UInt8]]) {
        rng = SeededRandom(seed: seed)
        self.samples = samples
    }

    mutating func next() -> [UInt8] {
        var bytes = samples.randomElement(using: &rng)!
        let roll = Int.random(in: 0..<100, using: &rng)
        if roll < 3 { return bytes }
        if roll < 8 { return (0..<Int.random(in: 0...512, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        for _ in 0..<Int.random(in: 1...8, using: &rng) {
            guard !bytes.isEmpty else { break }
            let at = Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<7, using: &rng) {
            case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
            case 1: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: at)
            case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...16, using: &rng)))
            case 3: bytes = Array(bytes.prefix(at))
            case 4:
                let end = min(bytes.count, at + Int.random(in: 1...64, using: &rng))
                bytes.insert(contentsOf: bytes[at..<end], at: end)
            case 5:
                // A number becomes an extreme value, or any spot gets an odd token.
                var end = at
                while end < bytes.count && (bytes[end] >= 0x30 && bytes[end] <= 0x39) { end += 1 }
                bytes.replaceSubrange(at..<end, with: Self.extremes.randomElement(using: &rng)!)
            default:
                bytes.insert(contentsOf: Self.extremes.randomElement(using: &rng)!, at: at)
            }
        }
        return bytes
    }
}
