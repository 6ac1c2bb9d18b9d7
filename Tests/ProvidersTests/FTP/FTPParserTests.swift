import Foundation
import XCTest
import FavFSCore
@testable import Providers

/// MLSD/MLST facts, LIST (Unix and DOS), replies, FEAT and paths: pure parsing, no server.
final class FTPParserTests: XCTestCase {
    // MARK: MLSD

    func testMLSDFactsAndAwkwardNames() {
        let body = [
            "type=cdir;modify=20240102030405;perm=el; .",
            "type=pdir;modify=20240102030405;perm=el; ..",
            "type=file;size=12;modify=20240102030405;perm=r;unique=fe00g1; plain.txt",
            "Type=File;Size=3;Modify=20240102030405.123;UNIX.mode=0644; a b;c=d; e",
            "type=dir;sizd=4096;modify=20231231235959; ünïcödé ☃",
            "type=file;size=0;modify=20240102030405; tab\there",
            "type=file;size=1;modify=20240102030405;  leading space",
            "type=OS.unix=slink:/etc/passwd;size=11;modify=20240102030405; link",
            "type=OS.unix=symlink;modify=20240102030405; link2",
            "type=file;size=5; semi;colon",
        ].joined(separator: "\r\n") + "\r\n"
        let entries = FTPMachineListing.parse(Data(body.utf8))
        XCTAssertEqual(entries.map(\.name), [".", "..", "plain.txt", "a b;c=d; e", "ünïcödé ☃", "tab\there", " leading space",
                                             "link", "link2", "semi;colon"])
        XCTAssertEqual(entries[0].kind, .selfOrParent)
        XCTAssertEqual(entries[1].kind, .selfOrParent)
        XCTAssertEqual(entries[2].kind, .file)
        XCTAssertEqual(entries[2].size, 12)
        XCTAssertEqual(entries[2].unique, "fe00g1")
        XCTAssertEqual(entries[2].modified, 1704164645)  // 2024-01-02T03:04:05Z
        XCTAssertEqual(entries[3].size, 3)
        XCTAssertEqual(entries[3].modified!, 1704164645.123, accuracy: 0.0001)
        XCTAssertEqual(entries[3].modifiedStamp, "20240102030405.123")
        XCTAssertEqual(entries[3].permissions, 0o644)
        XCTAssertEqual(entries[4].kind, .folder)
        XCTAssertEqual(entries[4].modified, 1704067199)
        XCTAssertEqual(entries[7].kind, .symlink(target: "/etc/passwd"))
        XCTAssertEqual(entries[8].kind, .symlink(target: nil))
        XCTAssertNil(entries[9].modified)

        let folder = ItemIdentifier("/d")
        XCTAssertNil(entries[0].item(folder.child(".")))
        let file = entries[2].item(folder.child("plain.txt"))!
        XCTAssertEqual(file.kind, .file)
        XCTAssertEqual(file.version, "12-20240102030405-fe00g1")
        let dir = entries[4].item(folder.child("x"))!
        XCTAssertEqual(dir.kind, .folder)
        XCTAssertEqual(dir.size, 0)
        XCTAssertNil(dir.version)
        let link = entries[7].item(folder.child("link"))!
        XCTAssertEqual(link.kind, .symlink)
        XCTAssertEqual(link.symlinkTarget, "/etc/passwd")
    }

    func testMLSDLineFeedsOnlyAndJunk() {
        let entries = FTPMachineListing.parse(Data("type=file;size=1; a\nnonsense\n\ntype=dir; b\n".utf8))
        XCTAssertEqual(entries.map(\.name), ["a", "b"])
    }

    func testMLSTReplyAndPinnedReadPair() {
        let lines = [
            "220 pyftpdlib ready.", "331 Username ok, send password.", "230 Login successful.",
            "257 \"/\" is the current directory.",
            "250-Listing \"/a b/x;y=z.txt\":", " modify=20261121074930;perm=radfwMT;size=6;type=file;unique=fe00gf96193; /a b/x;y=z.txt",
            "250 End MLST.",
            "250 \"/\" is the current directory.", "229 Entering extended passive mode (|||58081|).", "200 Type set to: Binary.",
            "213 6", "125 Data connection already open. Transfer starting.", "226 Transfer complete.",
            "250-Listing \"/a b/x;y=z.txt\":", " modify=20261121074931;perm=radfwMT;size=6;type=file;unique=fe00gf96193; /a b/x;y=z.txt",
            "250 End MLST.",
        ]
        let entries = FTPReply.mlstEntries(lines)
        XCTAssertEqual(entries.count, 2)
        XCTAssertEqual(entries[0].size, 6)
        XCTAssertEqual(entries[0].modifiedStamp, "20261121074930")
        XCTAssertNotEqual(entries[0].version, entries[1].version)
        // An MLSD line and an MLST line for the same file give the same version.
        let listed = FTPMachineListing.parseLine("modify=20261121074930;perm=radfwMT;size=6;type=file;unique=fe00gf96193; x;y=z.txt")!
        XCTAssertEqual(listed.version, entries[0].version)
    }

    // MARK: replies and FEAT

    func testReplyGrouping() {
        let replies = FTPReply.group(["220 hi", "211-Features:", " MLST type*;size*;", " 211 not the end", "211 End", "550 No such file or directory."])
        XCTAssertEqual(replies.map(\.code), [220, 211, 550])
        XCTAssertEqual(replies[1].lines.count, 4)
        XCTAssertEqual(replies[2].text, "550 No such file or directory.")
    }

    func testFeatures() {
        let pyftpdlib = ["211-Features supported:", " EPRT", " EPSV", " MDTM", " MFMT", " MLST type*;perm*;size*;modify*;unique*;",
                         " REST STREAM", " SIZE", " TVFS", " UTF8", "211 End FEAT."]
        XCTAssertEqual(FTPFeatures.parse(pyftpdlib), FTPFeatures(machineListings: true, setModified: true, sizeAndTime: true))
        let vsftpd = ["211-Features:", " EPRT", " EPSV", " MDTM", " PASV", " REST STREAM", " SIZE", " TVFS", "211 End"]
        XCTAssertEqual(FTPFeatures.parse(vsftpd), FTPFeatures(machineListings: false, setModified: false, sizeAndTime: true))
        XCTAssertEqual(FTPFeatures.parse(["500 Command \"FEAT\" not understood."]), .none)
    }

    /// A read's check on a LIST-only server: SIZE and MDTM replies against a LIST version.
    func testSizeAndTimeCheck() throws {
        XCTAssertNil(FTPSizeAndTime(version: "12-?"))
        XCTAssertNil(FTPSizeAndTime(version: "12-20261127100845-801h1"))  // MLSD's form
        let minute = try XCTUnwrap(FTPSizeAndTime(version: "1048576-202611271008"))
        let before = ["213 1048576", "213 20261127100845"]
        XCTAssertTrue(minute.agrees(with: before + ["150 Opening", "226 Done"], times: 1))
        // libcurl's own SIZE before RETR answers too.
        XCTAssertTrue(minute.agrees(with: before + ["213 1048576", "226 Done"] + before, times: 2))
        XCTAssertFalse(minute.agrees(with: before + ["226 Done"], times: 2), "no check after the transfer")
        XCTAssertFalse(minute.agrees(with: before + ["226 Done", "213 1048577", "213 20261127100845"], times: 2), "grew")
        XCTAssertFalse(minute.agrees(with: before + ["226 Done", "213 1048576", "213 20261127100901"], times: 2), "rewritten")
        XCTAssertFalse(minute.agrees(with: ["213 1048576", "550 No such file."], times: 1), "MDTM refused")
        let day = try XCTUnwrap(FTPSizeAndTime(version: "5-20250102"))
        XCTAssertTrue(day.agrees(with: ["213 5", "213 20250102235959.5"], times: 1))
        XCTAssertFalse(day.agrees(with: ["213 5", "213 20250103000000"], times: 1))
    }

    // MARK: LIST (Unix)

    func testUnixList() {
        let now = Date(timeIntervalSince1970: 1763711400)  // 2025-11-21T07:50:00Z
        let body = [
            "total 12",
            "drwxr-xr-x   2 owner    group        4096 Nov 21 07:49 a b",
            "-rw-r--r--   1 owner    group          16 Nov 21 07:49 f.txt",
            "-rw-r--r--   1 owner    group           6 Mar 03  2019   two leading",
            "-rw-r--r--   1 1000     1000            6 Dec 24 10:00 semi;colon = x",
            "lrwxrwxrwx   1 owner    group           7 Jan 05 12:30 link -> target dir/x",
            "-rw-r--r-- 1 ftp ftp 5 Nov 22 01:00 tab\there",
            "-rwsr-x--T   1 owner 9 Jan  1  2020 no group",
            "drwxr-xr-x   2 owner    group        4096 Nov 21 07:49 .",
            "-rw-r--r--   1 owner    group          16 Nov 21 07:49 ünïcödé ☃",
        ].joined(separator: "\r\n")
        let entries = FTPListing.parse(Data(body.utf8), now: now)
        XCTAssertEqual(entries.map(\.name), ["a b", "f.txt", "  two leading", "semi;colon = x", "link", "tab\there", "no group", ".", "ünïcödé ☃"])
        XCTAssertEqual(entries[0].kind, .folder)
        XCTAssertEqual(entries[0].modified, 1763711340)  // 2025-11-21T07:49Z
        XCTAssertEqual(entries[0].permissions, 0o755)
        XCTAssertEqual(entries[1].size, 16)
        XCTAssertEqual(entries[1].modifiedStamp, "202511210749")
        XCTAssertEqual(entries[2].modified, FTPTime.seconds(year: 2019, month: 3, day: 3))
        XCTAssertEqual(entries[2].modifiedStamp, "20190303")
        // Dec 24 10:00 is in the future for Nov 2025: last year.
        XCTAssertEqual(entries[3].modified, FTPTime.seconds(year: 2024, month: 12, day: 24, hour: 10))
        XCTAssertEqual(entries[4].kind, .symlink(target: "target dir/x"))
        // Nov 22 01:00 is less than a day ahead (clock skew): this year.
        XCTAssertEqual(entries[5].modified, FTPTime.seconds(year: 2025, month: 11, day: 22, hour: 1))
        XCTAssertEqual(entries[6].permissions, 0o5750)
        XCTAssertEqual(entries[6].size, 9)
        XCTAssertEqual(entries[7].kind, .selfOrParent)
        XCTAssertEqual(entries[1].version, "16-202511210749")
    }

    // MARK: LIST (DOS / IIS)

    func testDOSList() {
        let body = [
            "01-02-24  03:04PM       <DIR>          My Folder",
            "12-31-99  11:59AM                 1234 report 2024.txt",
            "07-04-2023  00:30            1,024 x;y",
            "01-02-24  12:00AM       <DIR>          .",
        ].joined(separator: "\r\n")
        let entries = FTPListing.parse(Data(body.utf8))
        XCTAssertEqual(entries.map(\.name), ["My Folder", "report 2024.txt", "x;y", "."])
        XCTAssertEqual(entries[0].kind, .folder)
        XCTAssertEqual(entries[0].modified, FTPTime.seconds(year: 2024, month: 1, day: 2, hour: 15, minute: 4))
        XCTAssertEqual(entries[1].kind, .file)
        XCTAssertEqual(entries[1].size, 1234)
        XCTAssertEqual(entries[1].modified, FTPTime.seconds(year: 1999, month: 12, day: 31, hour: 11, minute: 59))
        XCTAssertEqual(entries[2].size, 1024)
        XCTAssertEqual(entries[2].modified, FTPTime.seconds(year: 2023, month: 7, day: 4, minute: 30))
        XCTAssertEqual(entries[3].kind, .selfOrParent)
        XCTAssertEqual(FTPListing.parseLine("01-02-24  12:00AM       <DIR>          midnight")?.modified,
                       FTPTime.seconds(year: 2024, month: 1, day: 2))
    }

    // MARK: times and paths

    func testTimes() {
        XCTAssertEqual(FTPTime.seconds(year: 1970, month: 1, day: 1), 0)
        XCTAssertEqual(FTPTime.parseStamp("20000229235959"), 951868799)
        XCTAssertNil(FTPTime.parseStamp("2000022923595"))
        XCTAssertNil(FTPTime.parseStamp("20001329235959"))
        XCTAssertEqual(FTPTime.stamp(951868799.7), "20000229235959")
    }

    func testPaths() {
        let paths = FTPPaths(origin: "ftp://127.0.0.1:21", basePath: "/pub/files/")
        XCTAssertEqual(paths.basePath, "/pub/files")
        XCTAssertEqual(paths.serverPath(.rootContainer), "/pub/files")
        XCTAssertEqual(paths.serverPath(ItemIdentifier("/a b/c;d")), "/pub/files/a b/c;d")
        XCTAssertEqual(paths.url(for: .rootContainer, isFolder: true), "ftp://127.0.0.1:21/%2Fpub/files/")
        XCTAssertEqual(paths.url(for: ItemIdentifier("/100%/what?#x;type=a"), isFolder: false),
                       "ftp://127.0.0.1:21/%2Fpub/files/100%25/what%3F%23x%3Btype%3Da")
        XCTAssertEqual(paths.url(for: ItemIdentifier("/ü ☃"), isFolder: true), "ftp://127.0.0.1:21/%2Fpub/files/%C3%BC%20%E2%98%83/")
        let root = FTPPaths(origin: "ftp://h", basePath: "/")
        XCTAssertEqual(root.serverPath(.rootContainer), "/")
        XCTAssertEqual(root.serverPath(ItemIdentifier("/x")), "/x")
        XCTAssertEqual(root.url(for: .rootContainer, isFolder: true), "ftp://h/%2F")
        XCTAssertNotNil(FTPPaths.unsendable("/a\r\nb"))
        XCTAssertNil(FTPPaths.unsendable("/a\tb"))
    }

    func testRefusalTexts() {
        let errors = FTPErrors(remote: "ftp://h/")
        func kind(_ code: Int, _ text: String) -> ProviderError.Kind {
            errors.reply(FTPReply(code: code, lines: ["\(code) \(text)"]), command: "X", path: "/p").kind
        }
        XCTAssertEqual(kind(550, "No such file or directory."), .notFound)
        XCTAssertEqual(kind(550, "Permission denied."), .denied)
        XCTAssertEqual(kind(550, "Not enough privileges."), .denied)
        XCTAssertEqual(kind(550, "Directory not empty."), .notEmpty)
        XCTAssertEqual(kind(550, "File exists."), .exists)
        XCTAssertEqual(kind(550, "Failed."), .notFound)
        XCTAssertEqual(kind(553, "File name not allowed."), .denied)
        XCTAssertEqual(kind(552, "Exceeded storage allocation."), .noSpace)
        XCTAssertEqual(kind(530, "Not logged in."), .denied)
        XCTAssertEqual(kind(500, "Command not understood."), .notSupported)
        let e = errors.reply(FTPReply(code: 550, lines: ["550 No such file or directory."]), command: "DELE", path: "/p")
        XCTAssertEqual(e.status, 550)
        XCTAssertEqual(e.remote, "ftp://h/")
        XCTAssertEqual(e.path, "/p")
        XCTAssertTrue(e.detail.contains("DELE") && e.detail.contains("No such file"), e.detail)
    }
}
