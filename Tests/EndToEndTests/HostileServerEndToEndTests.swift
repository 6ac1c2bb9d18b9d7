import Foundation
import TestSupport
import XCTest

/// A WebDAV server that lies (`Tests/Fixtures/hostile_dav.py`): absurd sizes and dates,
/// duplicate names, hrefs outside the folder, names with '/' or NUL once decoded, names over
/// 255 bytes, a GET shorter than its Content-Length. The mount stays up, shows what can be
/// shown, skips the rest, and a short body is EIO, never a file padded with zeros. The huge
/// size is persisted: the next mount, from placeholders, must survive it too.
final class HostileServerEndToEndTests: XCTestCase {
    var server: BackgroundProcess?
    var mounts: [MountedFavFS] = []

    override func setUpWithError() throws {
        try E2EGate.require(apache: false)
        let hostile = try HostileDAVServer()
        server = hostile.process
        let port = hostile.port
        let m = try MountedFavFS(remote: "dav://127.0.0.1:\(port)/")
        mounts.append(m)
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        server?.stop()
        super.tearDown()
    }

    func testLiesAreSkippedOrClampedAndTheMountStaysUp() throws {
        let m = mounts[0]
        try m.mountOrThrow()
        for round in 0..<2 {
            let ls = try TimedProcess.sh("ls -la \(shq(m.path))", timeout: 60)
            XCTAssertTrue(ls.succeeded, "round \(round): ls -la: \(ls)")
            let names = Set(try FileManager.default.contentsOfDirectory(atPath: m.path))
            // Shown: what can be shown, with its lies clamped.
            for name in ["huge.bin", "negative.bin", "nonnumeric.bin", "future.txt", "baddate.txt", "dup.txt", "short.bin", "good.txt"] {
                XCTAssertTrue(names.contains(name), "round \(round): \(name) is missing: \(names.sorted())")
            }
            // Skipped: what no Linux name can be, and what is not in this folder.
            for name in ["escape.txt", "elsewhere.txt", "a/b.txt", "a%2Fb.txt", String(repeating: "n", count: 300)] {
                XCTAssertFalse(names.contains(name), "round \(round): \(name.prefix(40)) should be skipped")
            }
            XCTAssertFalse(names.contains { $0.contains("\0") }, "round \(round): a name with NUL")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m.path).filter { $0 == "dup.txt" }.count, 1,
                           "round \(round): a duplicate name is listed once")
            let stat = try TimedProcess.sh("stat -c '%n %s %Y' \(shq(m.path))/huge.bin \(shq(m.path))/negative.bin \(shq(m.path))/future.txt", timeout: 30)
            XCTAssertTrue(stat.succeeded, "round \(round): stat: \(stat)")
            XCTAssertTrue(stat.stdout.contains("huge.bin 9223372036854775807"), stat.stdout)
            XCTAssertTrue(stat.stdout.contains("negative.bin 0 "), stat.stdout)
            XCTAssertEqual(try String(contentsOfFile: m.path + "/good.txt", encoding: .utf8), "good content\n")

            // A folder answered with a login page (200, not 207): an error that says so.
            let plain = try TimedProcess.sh("ls \(shq(m.path))/plain", timeout: 60)
            XCTAssertFalse(plain.succeeded, "round \(round): ls of a folder answered with HTML: \(plain)")
            let log = (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
            XCTAssertTrue(log.contains("200 OK, not 207 Multi-Status"), "round \(round): the log should say what the server did wrong")
            XCTAssertFalse(log.contains("PROPFIND failed: 200"), "round \(round)")

            // A body shorter than promised: EIO, never zeros.
            let short = try TimedProcess.sh("cat \(shq(m.path))/short.bin > /dev/null", timeout: 60)
            XCTAssertFalse(short.succeeded, "round \(round): a short GET must fail the read: \(short)")
            XCTAssertTrue(short.stderr.contains("Input/output error"), short.stderr)
            XCTAssertTrue(m.isMounted, "round \(round): the mount went away")

            // The absurd size is in the placeholder database now: remount from it.
            let r = try m.unmount()
            XCTAssertTrue(r.succeeded, "unmount: \(r)")
            if round == 0 { try m.mountOrThrow() }
        }
    }
}
