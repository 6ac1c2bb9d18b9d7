import Foundation
import TestSupport
import XCTest

/// Reads over FTP cost what `curl` fetching the files one after another costs: `cat` of a
/// folder of small files is one RETR per file on one login (a second at most, for a listing), never an aborted RETR (libcurl
/// closes the control connection after ABOR, and the next read logs in again). Counted in the
/// servers' own transfer logs. And the version check stays: a file rewritten at the server
/// while it is read fails with ESTALE.
final class FTPReadsEndToEndTests: XCTestCase {
    /// 12 files of 1 MiB and 12 of 1 KB to 3 MB.
    static func files() -> [String: Data] {
        var rng = SeededRandom(seed: 27)
        func bytes(_ n: Int) -> Data {
            var words = [UInt64](repeating: 0, count: n / 8 + 1)
            for i in words.indices { words[i] = rng.next() }
            return words.withUnsafeBytes { Data($0.prefix(n)) }
        }
        var files: [String: Data] = [:]
        for i in 0..<12 { files["reads/one-\(i).bin"] = bytes(1 << 20) }
        for (i, size) in [1_000, 4_095, 70_000, 131_073, 200_000, 500_000, 900_000, 1_500_000, 2_000_000, 2_500_000, 3_000_000, 12]
            .enumerated() { files["reads/mixed-\(i).bin"] = bytes(size) }
        return files
    }

    /// Seeds the files, mounts, `cat`s them all (sorted, as a shell glob does) and checks the bytes.
    func catAll(_ url: String, password: String, root: URL, fixOwnership: () throws -> Void) throws -> Int {
        let files = Self.files()
        try FileManager.default.createDirectory(at: root.appendingPathComponent("reads"), withIntermediateDirectories: true)
        for (path, data) in files { try data.write(to: root.appendingPathComponent(path)) }
        try fixOwnership()
        let m = try MountedFavFS(remote: url)
        defer { m.tearDown() }
        try m.mountOrThrow(password: password)
        let names = files.keys.sorted()
        let out = m.base.appendingPathComponent("out").path
        let r = try TimedProcess.sh("ls -l \(shq(m.path + "/reads")) >/dev/null && cd \(shq(m.path)) && cat "
                                    + names.map(shq).joined(separator: " ") + " > \(shq(out))", timeout: 120)
        XCTAssertTrue(r.succeeded, "cat: \(r)\n\(m.logProblems())")
        let expected = names.reduce(into: Data()) { $0.append(files[$1]!) }
        XCTAssertTrue(FileManager.default.contents(atPath: out) == expected, "cat through the mount gave other bytes than the server has")
        XCTAssertTrue(try m.unmount().succeeded)
        return files.count
    }

    func testVsftpdReadsEachFileInOneRETROnOneLogin() throws {
        try E2EGate.require(apache: false)
        guard VsftpdServer.isAvailable else { throw XCTSkip("vsftpd (make setup) and root are needed") }
        let s = try VsftpdServer()
        defer { s.remove() }
        // Every command in the log too, to count the LISTs.
        let conf = s.root.appendingPathComponent("vsftpd.conf")
        try (String(contentsOf: conf, encoding: .utf8) + "\nlog_ftp_protocol=YES\n").write(to: conf, atomically: true, encoding: .utf8)
        try s.start()
        let count = try catAll(s.url(), password: VsftpdServer.password, root: s.documentRoot, fixOwnership: s.fixOwnership)
        let log = try String(contentsOf: s.root.appendingPathComponent("vsftpd.log"), encoding: .utf8)
        let lines = log.split(separator: "\n")
        let downloads = lines.filter { $0.contains("OK DOWNLOAD") }.count
        let aborted = lines.filter { $0.contains("FAIL DOWNLOAD") }
        let logins = lines.filter { $0.contains("OK LOGIN") }.count
        XCTAssertEqual(downloads, count, "one RETR per file:\n\(log)")
        XCTAssertEqual(aborted, [], "aborted RETRs")
        // One for the listings and reads; a second where a listing ran beside a read. The
        // read-ahead across files (`cat` of a folder in name order) fetches one file at a time,
        // the opened one first, so it shares the reader's connection instead of logging in
        // beside it.
        XCTAssertLessThanOrEqual(logins, 2, "logins:\n\(log)")
        // vsftpd has no MLST: each read is checked by SIZE and MDTM in its own connection, not
        // by a LIST of the folder (the root's and the folder's listings: LIST and LIST -a each).
        let lists = lines.filter { $0.contains("FTP command: Client") && $0.contains("\"LIST") }.count
        XCTAssertLessThanOrEqual(lists, 4, "LIST commands:\n\(log)")
        XCTAssertGreaterThanOrEqual(lines.filter { $0.contains("\"MDTM ") }.count, count, "no MDTM check per read")
    }

    func testProftpdReadsEachFileInOneRETROnOneLogin() throws {
        try E2EGate.require(apache: false)
        guard ProftpdServer.isAvailable else { throw XCTSkip("proftpd (make setup) and root are needed") }
        let s = try ProftpdServer()
        defer { s.remove() }
        try s.start()
        let count = try catAll(s.url(), password: ProftpdServer.password, root: s.documentRoot, fixOwnership: s.fixOwnership)
        // xferlog: one line per transfer, its last field c (complete) or i (incomplete).
        let xfer = (try? String(contentsOf: s.root.appendingPathComponent("xferlog"), encoding: .utf8)) ?? ""
        let transfers = xfer.split(separator: "\n").filter { $0.contains("/reads/") }
        XCTAssertEqual(transfers.filter { $0.hasSuffix(" i") }, [], "aborted RETRs")
        XCTAssertEqual(transfers.count, count, "one RETR per file:\n\(xfer)")
        let system = (try? String(contentsOf: s.root.appendingPathComponent("proftpd.log"), encoding: .utf8)) ?? ""
        let logins = system.split(separator: "\n").filter { $0.contains("Login successful") }.count
        XCTAssertLessThanOrEqual(logins, 2, "logins:\n\(system)")
    }

    /// A file larger than what is read to its end: 128 KiB read, the file rewritten at the
    /// server (another size), then a read far into it must fail with ESTALE, not splice.
    func changedWhileReadIsESTALE(_ url: String, password: String, root: URL, fixOwnership: () throws -> Void) throws {
        let path = root.appendingPathComponent("changing.bin")
        try Data(repeating: 0x61, count: 24 << 20).write(to: path)
        try fixOwnership()
        let m = try MountedFavFS(remote: url)
        defer { m.tearDown() }
        try m.mountOrThrow(password: password)
        let r = try TimedProcess.sh("""
            /usr/bin/python3 -c '
            import errno, os, sys
            fd = os.open(sys.argv[1], os.O_RDONLY)
            assert os.pread(fd, 131072, 0) == b"a" * 131072
            with open(sys.argv[2], "r+b") as f:
                f.write(b"b" * (20 << 20))
                f.truncate(22 << 20)
            try:
                got = os.pread(fd, 65536, 20 << 20)
            except OSError as e:
                print("refused", errno.errorcode[e.errno])
                sys.exit(0)
            print("read", set(got))
            ' \(shq(m.path + "/changing.bin")) \(shq(path.path))
            """, timeout: 60)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(r.stdout.contains("refused ESTALE"), "a read after the file changed at the server was not refused: \(r)\n\(m.logProblems())")
    }

    func testVsftpdFileChangedWhileReadIsESTALE() throws {
        try E2EGate.require(apache: false)
        guard VsftpdServer.isAvailable else { throw XCTSkip("vsftpd (make setup) and root are needed") }
        let s = try VsftpdServer()
        defer { s.remove() }
        try s.start()
        try changedWhileReadIsESTALE(s.url(), password: VsftpdServer.password, root: s.documentRoot, fixOwnership: s.fixOwnership)
    }

    func testProftpdFileChangedWhileReadIsESTALE() throws {
        try E2EGate.require(apache: false)
        guard ProftpdServer.isAvailable else { throw XCTSkip("proftpd (make setup) and root are needed") }
        let s = try ProftpdServer()
        defer { s.remove() }
        try s.start()
        try changedWhileReadIsESTALE(s.url(), password: ProftpdServer.password, root: s.documentRoot, fixOwnership: s.fixOwnership)
    }
}
