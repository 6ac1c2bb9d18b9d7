import Foundation
import TestSupport
import XCTest

/// A server that stops answering (every Apache process SIGSTOPped: the kernel still accepts
/// connections, nothing answers). `ls` of a folder not listed yet, a cold read and an fsync
/// answer ETIMEDOUT within the mount's `--timeout` (5 s here; 30 s by default), never hang; the
/// fsync'ed bytes stay in the journal and reach the server once it answers again.
final class HungServerEndToEndTests: XCTestCase {
    func testCallsAnswerWithinTheTimeoutAndNothingIsLost() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        let docs = apache.documentRoot
        try FileManager.default.createDirectory(at: docs.appendingPathComponent("a"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: docs.appendingPathComponent("b/c"), withIntermediateDirectories: true)
        try Data(repeating: 7, count: 8 << 20).write(to: docs.appendingPathComponent("a/big.bin"))
        try apache.start()
        defer { apache.resume(); apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--timeout", "5"])
        XCTAssertEqual(try TimedProcess.sh("ls \(shq(m.path)) \(shq(m.path))/a", timeout: 30).status, 0)

        apache.pause()
        let bound = 20.0  // the 5 s timeout, with a generous margin for a loaded machine
        let ls = try TimedProcess.sh("ls \(shq(m.path))/b", timeout: 120)
        XCTAssertFalse(ls.succeeded, "ls of an unlisted folder on a hung server: \(ls)")
        XCTAssertLessThan(ls.elapsed, bound, "ls took \(ls.elapsed) s")
        XCTAssertTrue(ls.stderr.contains("timed out"), ls.stderr)

        let read = try TimedProcess.sh("head -c 100 \(shq(m.path))/a/big.bin > /dev/null", timeout: 120)
        XCTAssertFalse(read.succeeded, "a cold read on a hung server: \(read)")
        XCTAssertLessThan(read.elapsed, bound, "the read took \(read.elapsed) s")

        let write = try TimedProcess.run("/usr/bin/python3", ["-c", """
            import os, sys, time
            fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY, 0o644)
            os.write(fd, b"written while the server hung\\n")
            t = time.time()
            try:
                os.fsync(fd)
                print("fsync ok", time.time() - t)
            except OSError as e:
                print("fsync", e.strerror, time.time() - t)
            os.close(fd)
            """, m.path + "/w.txt"], timeout: 120)
        XCTAssertTrue(write.succeeded, "\(write)")
        XCTAssertLessThan(write.elapsed, bound, "write + fsync took \(write.elapsed) s")
        XCTAssertTrue(write.stdout.contains("fsync Connection timed out"), write.stdout)
        print("hung server: ls \(String(format: "%.1f", ls.elapsed)) s, read \(String(format: "%.1f", read.elapsed)) s, \(write.stdout.trimmingCharacters(in: .whitespacesAndNewlines))")

        // The server answers again: what was written is uploaded, nothing lost.
        apache.resume()
        let r = try m.unmount(timeout: 120)
        XCTAssertTrue(r.succeeded, "unmount: \(r)")
        XCTAssertEqual(try? String(contentsOf: docs.appendingPathComponent("w.txt"), encoding: .utf8), "written while the server hung\n")
    }
}
