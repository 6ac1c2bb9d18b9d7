import Foundation
import TestSupport
import XCTest

/// A server that stops answering (every Apache process SIGSTOPped: the kernel still accepts
/// connections, nothing answers). `ls` of a folder not listed yet and a cold read answer
/// ETIMEDOUT within the mount's `--timeout` (5 s here; 30 s by default), never hang; an fsync
/// succeeds (the bytes are safe on this machine, `--fsync local`), and they reach the server
/// once it answers again.
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
        XCTAssertTrue(write.stdout.contains("fsync ok"), "fsync of data safe on this machine must not fail: \(write.stdout)")
        print("hung server: ls \(String(format: "%.1f", ls.elapsed)) s, read \(String(format: "%.1f", read.elapsed)) s, \(write.stdout.trimmingCharacters(in: .whitespacesAndNewlines))")

        // The server answers again: what was written is uploaded, nothing lost.
        apache.resume()
        let r = try m.unmount(timeout: 120)
        XCTAssertTrue(r.succeeded, "unmount: \(r)")
        XCTAssertEqual(try? String(contentsOf: docs.appendingPathComponent("w.txt"), encoding: .utf8), "written while the server hung\n")
    }

    /// Ctrl-C on a program waiting on a hung server: with no `--timeout` (0) the kernel would
    /// hold the program until the server answered; FUSE_INTERRUPT is answered EINTR at once.
    func testAnInterruptedCallAnswersAtOnce() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        let docs = apache.documentRoot
        try FileManager.default.createDirectory(at: docs.appendingPathComponent("b"), withIntermediateDirectories: true)
        try Data(repeating: 7, count: 4 << 20).write(to: docs.appendingPathComponent("big.bin"))
        try apache.start()
        defer { apache.resume(); apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--timeout", "0"])
        XCTAssertEqual(try TimedProcess.sh("ls \(shq(m.path))", timeout: 30).status, 0)
        apache.pause()
        // Each waits on the hung server, gets SIGINT after 1 s, and must be gone soon after.
        var timings: [String] = []
        for (what, command) in [("read", "exec cat \(shq(m.path))/big.bin > /dev/null"), ("ls", "exec ls \(shq(m.path))/b")] {
            let r = try TimedProcess.sh("\(command) & pid=$!; sleep 1; kill -INT $pid; wait $pid; echo status=$?", timeout: 90)
            let after = r.elapsed - 1
            XCTAssertLessThan(after, 10, "\(what): the interrupted program waited \(after) s for a hung server: \(r)")
            timings.append("\(what) \(String(format: "%.2f", after)) s")
        }
        print("interrupted on a hung server with --timeout 0: " + timings.joined(separator: ", "))
        apache.resume()
        XCTAssertTrue(try m.unmount(timeout: 120).succeeded)
    }

    /// A server that trickles (2 bytes/s through a proxy: a low-speed limit alone never fires):
    /// a cold read answers within `--timeout` instead of holding the reader for minutes.
    func testATricklingServerDoesNotHoldAReader() throws {
        try E2EGate.require(apache: true)
        guard let python = FavartServer.python else { throw XCTSkip("python3 is needed for the trickling proxy") }
        let apache = try ApacheServer()
        try Data(repeating: 9, count: 1 << 20).write(to: apache.documentRoot.appendingPathComponent("slow.bin"))
        try apache.start()
        defer { apache.remove() }
        let port = try FreePort.next()
        let script = URL(fileURLWithPath: FavartServer.script).deletingLastPathComponent().appendingPathComponent("trickle_proxy.py").path
        let proxy = try BackgroundProcess(python, [script, "\(port)", "\(apache.port)", "2"],
                                          logFile: URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-trickle-\(port).log"))
        defer { proxy.stop() }
        guard FreePort.waitUntilListening(port: port, timeout: 10) else { throw ShellError("the proxy did not start: \(proxy.log())") }
        let m = try MountedFavFS(remote: "dav://127.0.0.1:\(port)/files/")
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--timeout", "5"])
        let read = try TimedProcess.sh("head -c 4096 \(shq(m.path))/slow.bin > /dev/null", timeout: 300)
        XCTAssertFalse(read.succeeded, "a read at 2 bytes/s cannot bring 4 KiB in time: \(read)")
        XCTAssertLessThan(read.elapsed, 20, "the trickled read took \(read.elapsed) s")
        XCTAssertTrue(m.isMounted)
        print("trickling server (2 bytes/s), --timeout 5: the read answered in \(String(format: "%.1f", read.elapsed)) s")
    }
}
