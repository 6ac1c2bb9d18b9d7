import Foundation
import XCTest
import FavFSCore
@testable import Providers

/// The long-listing parser: OpenSSH's longnames plus libcurl's " -> target", awkward names, dates.
final class SFTPLongNameTests: XCTestCase {
    private func parse(_ line: String, file: StaticString = #filePath, line l: UInt = #line) throws -> SFTPLongName {
        try XCTUnwrap(SFTPLongName.parse(Substring(line)), "unparsed: \(line)", file: file, line: l)
    }

    func testFileFolderAndSymlink() throws {
        let file = try parse("-rw-r--r--    1 root     root         1234 Nov 21 07:47 a b.txt")
        XCTAssertEqual(file.kind, .file)
        XCTAssertEqual(file.permissions, 0o644)
        XCTAssertEqual(file.size, 1234)
        XCTAssertEqual(file.dateText, "Nov 21 07:47")
        XCTAssertEqual(file.rest, "a b.txt")

        let folder = try parse("drwxr-xr-x    2 root     root         4096 Nov 21 07:47 sub dir")
        XCTAssertEqual(folder.kind, .folder)
        XCTAssertEqual(folder.permissions, 0o755)
        XCTAssertEqual(folder.rest, "sub dir")

        let link = try parse("lrwxrwxrwx    1 root     root            7 Nov 21 07:47 link -> a b.txt")
        XCTAssertEqual(link.kind, .symlink)
        XCTAssertEqual(link.size, 7)
        XCTAssertEqual(link.unambiguousSymlink?.name, "link")
        XCTAssertEqual(link.unambiguousSymlink?.target, "a b.txt")
    }

    func testAwkwardNamesComeOutWhole() throws {
        for name in ["  leading spaces", "trailing spaces  ", "tab\there", "ünïcödé ☃", "a -> b", "Nov 21 07:47 x", "100%", "it's \"q\"",
                     "1234 Nov 21 07:47 tricky", "-rw-r--r--"] {
            let line = try parse("-rw-r--r--    1 root     root            5 Jan  3 09:15 \(name)")
            XCTAssertEqual(line.rest, name)
            XCTAssertEqual(line.size, 5)
            XCTAssertEqual(line.kind, .file, "a file named \(name) -> is not a symlink")
        }
    }

    func testWideColumnsNumericOwnersAndOddTypes() throws {
        let wide = try parse("-rw-------    1 averyveryverylongusername staffgroupname 123456789012 Feb 29  2020 big.bin")
        XCTAssertEqual(wide.size, 123_456_789_012)
        XCTAssertEqual(wide.dateText, "Feb 29  2020")
        XCTAssertEqual(wide.rest, "big.bin")
        XCTAssertEqual(wide.permissions, 0o600)
        let numeric = try parse("-rwsr-sr-t    3 1000     1000            0 Dec  1 00:00 special")
        XCTAssertEqual(numeric.permissions, 0o7755)
        let sticky = try parse("drwxrwxrwT    3 0        0            4096 Dec  1 00:00 tmp")
        XCTAssertEqual(sticky.permissions, 0o1776)
        XCTAssertNil(try parse("prw-r--r--    1 root     root            0 Dec  1 00:00 fifo").kind)
        XCTAssertNil(SFTPLongName.parse("total 12"))
        XCTAssertNil(SFTPLongName.parse(""))
        XCTAssertNil(SFTPLongName.parse("-rw-r--r-- garbage"))
    }

    func testAmbiguousSymlinksNeedTheExactNames() throws {
        let line = try parse("lrwxrwxrwx    1 root     root            6 Nov 21 07:47 a -> b -> c -> d")
        XCTAssertNil(line.unambiguousSymlink)
        XCTAssertEqual(SFTPListing.resolve(line.rest, names: ["a -> b", "x"])?.name, "a -> b")
        XCTAssertEqual(SFTPListing.resolve(line.rest, names: ["a -> b", "x"])?.target, "c -> d")
        XCTAssertEqual(SFTPListing.resolve(line.rest, names: ["a"])?.target, "b -> c -> d")
        XCTAssertNil(SFTPListing.resolve(line.rest, names: ["zzz"]))
    }

    func testDatesInTheServersTimeZone() throws {
        let utc = TimeZone(identifier: "UTC")!
        let now = Date(timeIntervalSince1970: 1_763_712_000)  // 2025-11-21 08:00 UTC
        XCTAssertEqual(SFTPLongName.date("Nov 21 07:47", timeZone: utc, now: now), 1_763_711_220)
        // A time "later" than now is from last year (ls shows times for the last six months).
        XCTAssertEqual(SFTPLongName.date("Dec 24 18:00", timeZone: utc, now: now), 1_735_063_200)  // 2024-12-24
        XCTAssertEqual(SFTPLongName.date("Mar  4  2019", timeZone: utc, now: now), 1_551_657_600)
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        XCTAssertEqual(SFTPLongName.date("Nov 21 08:47", timeZone: berlin, now: now), 1_763_711_220)
        XCTAssertNil(SFTPLongName.date("Foo 21 07:47", timeZone: utc, now: now))
    }

    func testVersionsRoundTrip() {
        let v = SFTPVersion(size: 12, mtime: 1_700_000_000)
        XCTAssertEqual(v.string, "s12-t1700000000")
        XCTAssertEqual(SFTPVersion(v.string), v)
        XCTAssertNil(SFTPVersion("\"etag\""))
    }

    func testQuotingAndEncoding() {
        XCTAssertEqual(SFTPPaths.quote(#"it's "q" \ x"#), #""it's \"q\" \\ x""#)
        let paths = SFTPPaths(host: "127.0.0.1", port: 2222, rootPath: "/srv/files/")
        XCTAssertEqual(paths.serverPath(ItemIdentifier("/a b/c%d")), "/srv/files/a b/c%d")
        XCTAssertEqual(paths.url(ItemIdentifier("/a b/trailing dots...")), "sftp://127.0.0.1:2222/srv/files/a%20b/trailing%20dots%2E%2E%2E")
        XCTAssertEqual(paths.listingURL(.rootContainer), "sftp://127.0.0.1:2222/srv/files/")
        XCTAssertEqual(SFTPPaths(host: "h", port: nil, rootPath: "/").listingURL(.rootContainer), "sftp://h/")
    }

    func testQuoteErrorKinds() {
        XCTAssertEqual(SFTPErrors.quoteKind("rm command failed: No such file or directory"), .notFound)
        XCTAssertEqual(SFTPErrors.quoteKind("rename command failed: Permission denied"), .denied)
        XCTAssertEqual(SFTPErrors.quoteKind("mkdir command failed: File already exists"), .exists)
        XCTAssertEqual(SFTPErrors.quoteKind("rmdir command failed: Directory not empty"), .notEmpty)
        XCTAssertEqual(SFTPErrors.quoteKind("rmdir command failed: Operation failed"), .serverError)
    }

    func testStatVFSHeaders() {
        let one = ["statvfs": "f_bsize: 4096\nf_frsize: 4096\nf_blocks: 100\nf_bfree: 40\nf_bavail: 30\nf_files: 9"]
        XCTAssertEqual(SFTPStatVFS.quota(fromHeaders: one), Quota(usedBytes: 60 * 4096, availableBytes: 30 * 4096, totalBytes: 100 * 4096, freeBytes: 40 * 4096))
        let split = ["f_frsize": "512", "f_blocks": "10", "f_bfree": "5", "f_bavail": "4"]
        XCTAssertEqual(SFTPStatVFS.quota(fromHeaders: split), Quota(usedBytes: 5 * 512, availableBytes: 4 * 512, totalBytes: 10 * 512, freeBytes: 5 * 512))
        XCTAssertNil(SFTPStatVFS.quota(fromHeaders: [:]))
    }
}
