import Foundation
import TestSupport
import XCTest

/// favfs against a real Apache mod_dav serving the generated tree (generated once per class).
final class WebDAVEndToEndTests: XCTestCase {
    nonisolated(unsafe) static var server: ApacheServer?
    nonisolated(unsafe) static var setupError: Error?
    var mounts: [MountedFavFS] = []

    /// The shared server, created and filled on first use.
    static func sharedServer() throws -> ApacheServer {
        if let setupError { throw setupError }
        if let server {
            if !server.isRunning { try server.start() }
            return server
        }
        do {
            let s = try ApacheServer()
            let t0 = Date()
            try TreeGenerator().write(into: s.documentRoot)
            print("WebDAVEndToEndTests: tree generated in \(String(format: "%.1f", Date().timeIntervalSince(t0))) s")
            try s.start()
            server = s
            return s
        } catch {
            setupError = error
            throw error
        }
    }

    override class func tearDown() {
        server?.remove()
        server = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        try E2EGate.require(apache: true)
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        mounts = []
        super.tearDown()
    }

    func makeMount(cacheDir: URL? = nil) throws -> (MountedFavFS, ApacheServer) {
        let s = try Self.sharedServer()
        let m = try MountedFavFS(remote: s.davURL, cacheDir: cacheDir)
        mounts.append(m)
        return (m, s)
    }

    // 1.
    func testFullTreeMatchesServer() throws {
        let (m, s) = try makeMount()
        try m.mountOrThrow()
        try SharedChecks.treeEquality(mount: m.path, server: s.documentRoot.path)
    }

    // 2.
    func testRandomOffsetReads() throws {
        let (m, s) = try makeMount()
        try m.mountOrThrow()
        try SharedChecks.randomOffsetReads(mount: m.path, server: s.documentRoot.path)
    }

    // 3.
    func testPartialReadFetchesOnlyItsRange() throws {
        let (m, s) = try makeMount()
        try m.mountOrThrow()
        let mark = s.accessLogLines().count
        let offset = 32 << 20
        func readCmd(_ root: String) -> String {
            "set -o pipefail; dd if=\(shq(root + "/" + TreeGenerator.bigFile)) iflag=skip_bytes,count_bytes skip=\(offset) count=4096 bs=4096 status=none | sha256sum"
        }
        let mr = try TimedProcess.sh(readCmd(m.path), timeout: 60)
        XCTAssertTrue(mr.succeeded, "read on the mount: \(mr)")
        let sr = try TimedProcess.sh(readCmd(s.documentRoot.path), timeout: 60)
        XCTAssertEqual(mr.stdout, sr.stdout, "the 4 KiB at 32 MiB differ from the server's")
        // Give background read-ahead a moment, then unmount so every request is finished and logged.
        usleep(1_000_000)
        let u = try m.unmount()
        XCTAssertTrue(u.succeeded, "favfs unmount: \(u)")
        usleep(300_000)

        let path = "/files/" + TreeGenerator.bigFile
        let lines = s.accessLogLines().dropFirst(mark)
        let gets = lines.filter { $0.hasPrefix("GET \(path) ") }
        let bytes = gets.reduce(0) { total, line in
            let f = line.split(separator: " ")
            return total + (f.count > 3 ? Int(f[3]) ?? 0 : 0)
        }
        let ranged = gets.filter { !$0.hasSuffix("\"-\"") }
        print("partial read: \(gets.count) GETs of \(path), \(bytes) bytes:\n" + gets.prefix(20).joined(separator: "\n"))
        XCTAssertGreaterThan(gets.count, 0, "no GET of \(path) in the access log after the mark:\n" + lines.suffix(20).joined(separator: "\n"))
        XCTAssertGreaterThan(ranged.count, 0, "no ranged GET of \(path): \(gets)")
        XCTAssertLessThan(bytes, 4 << 20, "a 4 KiB read fetched \(bytes) bytes of the 64 MiB file: \(gets)")
    }

    // 4.
    func testUnmountEvictsContent() throws {
        let (m, _) = try makeMount()
        try SharedChecks.unmountEvicts(m)
    }

    func testUnmountKeepCacheKeepsContent() throws {
        let (m, _) = try makeMount()
        try SharedChecks.unmountKeepCacheKeeps(m)
    }

    // 5.
    func testRemountWithServerStopped() throws {
        let (m, s) = try makeMount()
        try m.mountOrThrow()
        let first = try Tree.listing(m.path)
        XCTAssertGreaterThan(first.count, TreeGenerator.smallFileCount)
        let u = try m.unmount()
        XCTAssertTrue(u.succeeded, "favfs unmount: \(u)")
        XCTAssertFalse(m.isMounted)

        s.stop()
        defer { XCTAssertNoThrow(try s.start(), "restarting Apache") }
        XCTAssertFalse(FreePort.isListening(port: s.port), "Apache still listening after stop")

        let m2 = try MountedFavFS(remote: s.davURL, cacheDir: m.cacheDir)
        mounts.append(m2)
        try m2.mountOrThrow()
        let listStart = Date()
        let second = try Tree.listing(m2.path, timeout: 120)
        XCTAssertLessThan(Date().timeIntervalSince(listStart), 30, "listing the whole tree from placeholders with the server down")
        XCTAssertEqual(Set(second.keys), Set(first.keys), "paths listed with the server down differ")
        let sizeDiffs = first.filter { $0.value.kind == "f" && second[$0.key]?.size != $0.value.size }.map(\.key).sorted()
        XCTAssertEqual(Array(sizeDiffs.prefix(20)), [], "sizes differ with the server down")
        let kindOrTimeDiffs = first.filter { second[$0.key]?.kind != $0.value.kind
            || ($0.value.kind == "f" && second[$0.key]?.mtime != $0.value.mtime) }.map(\.key).sorted()
        XCTAssertEqual(Array(kindOrTimeDiffs.prefix(20)), [], "kinds or mtimes differ with the server down")
        let old = TreeGenerator.oldFiles[0]
        let st = try TimedProcess.sh("stat -c '%s %Y' \(shq(m2.path + "/" + old.path)) \(shq(m2.path + "/" + TreeGenerator.bigFile))", timeout: 30)
        let oldSize = try Data(contentsOf: s.documentRoot.appendingPathComponent(old.path)).count
        XCTAssertEqual(st.stdout, "\(oldSize) \(old.mtime)\n\(TreeGenerator.bigFileSize) \(first[TreeGenerator.bigFile]?.mtime ?? -1)\n",
                       "stat with the server down: \(st)")

        // Content never fetched: the read fails (EIO) rather than hanging.
        let never = m2.path + "/many/" + TreeGenerator.smallFileName(4_321)
        let r = try TimedProcess.sh("cat \(shq(never))", timeout: 60)
        XCTAssertNotEqual(r.status, 0, "reading never-fetched content with the server down succeeded: \(r)")
        XCTAssertFalse(r.timedOut, "reading with the server down hung: \(r)")
        XCTAssertLessThan(r.elapsed, 30, "reading with the server down took \(r.elapsed) s")
        XCTAssertTrue(r.stderr.contains("Input/output error"), "expected EIO: \(r.stderr)")
        let big = try TimedProcess.sh("dd if=\(shq(m2.path + "/" + TreeGenerator.bigFile)) of=/dev/null bs=4096 count=1 skip=100 status=none", timeout: 60)
        XCTAssertNotEqual(big.status, 0, "reading never-fetched big.bin with the server down succeeded")
        XCTAssertLessThan(big.elapsed, 30, "reading big.bin with the server down took \(big.elapsed) s")
        XCTAssertTrue(big.stderr.contains("Input/output error"), "expected EIO: \(big.stderr)")
        let u2 = try m2.unmount()
        XCTAssertTrue(u2.succeeded, "favfs unmount with the server down: \(u2)")
    }

    // 6.
    func testReadOnly() throws {
        let (m, s) = try makeMount()
        try m.mountOrThrow(extraArgs: ["--read-only"])
        try SharedChecks.readOnly(mount: m.path, server: s.documentRoot.path)
    }

    func testCacheSizeLimit() throws {
        let (m, s) = try makeMount()
        try SharedChecks.cacheSizeLimit(m, server: s.documentRoot.path)
    }

    func testRemoteChangesAppear() throws {
        let (m, s) = try makeMount()
        try SharedChecks.remoteChangesAppear(m, server: s.documentRoot.path)
    }

    func testForeground() throws {
        let (m, _) = try makeMount()
        try SharedChecks.foreground(m)
    }

    /// The server stops, then hangs, then comes back, under a live mount: cached content and listings
    /// keep working, uncached reads fail (EIO) in bounded time instead of hanging, and reads work again after.
    func testServerGoesAwayWhileMounted() throws {
        let (m, s) = try makeMount()
        try m.mountOrThrow()
        let listing = try Tree.listing(m.path)
        XCTAssertEqual(listing.count, try Tree.listing(s.documentRoot.path).count)
        let cached = m.path + "/many/" + TreeGenerator.smallFileName(10)
        let warm = try TimedProcess.sh("cat \(shq(cached))", timeout: 60)
        XCTAssertEqual(Data(warm.stdout.utf8), TreeGenerator.smallFileContent(10))

        s.stop()
        var restarted = false
        defer { if !restarted { XCTAssertNoThrow(try s.start(), "restarting Apache") } }
        // Connection refused.
        let refused = try TimedProcess.sh("cat \(shq(m.path + "/many/" + TreeGenerator.smallFileName(11)))", timeout: 60)
        XCTAssertNotEqual(refused.status, 0, "uncached read with the server stopped succeeded: \(refused)")
        XCTAssertLessThan(refused.elapsed, 30, "uncached read with the server stopped: \(refused)")
        XCTAssertTrue(refused.stderr.contains("Input/output error"), "expected EIO: \(refused.stderr)")
        let again = try TimedProcess.sh("cat \(shq(cached))", timeout: 30)
        XCTAssertEqual(Data(again.stdout.utf8), TreeGenerator.smallFileContent(10), "cached content with the server stopped: \(again)")
        let ls = try TimedProcess.sh("ls \(shq(m.path + "/many")) | wc -l", timeout: 30)
        XCTAssertEqual(ls.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "\(TreeGenerator.smallFileCount)", "ls with the server stopped: \(ls)")
        XCTAssertLessThan(ls.elapsed, 10, "ls of a listed folder with the server stopped took \(ls.elapsed) s")

        // A server that accepts and never answers.
        let hole = try BlackHoleServer(port: s.port)
        let hung = try TimedProcess.sh("cat \(shq(m.path + "/many/" + TreeGenerator.smallFileName(12)))", timeout: 150)
        XCTAssertFalse(hung.timedOut, "uncached read against a server that never answers hung for 150 s")
        XCTAssertNotEqual(hung.status, 0, "uncached read against a server that never answers succeeded: \(hung)")
        XCTAssertLessThan(hung.elapsed, 90, "uncached read against a server that never answers: \(hung)")
        XCTAssertTrue(hung.stderr.contains("Input/output error"), "expected EIO: \(hung.stderr)")
        let lsHung = try TimedProcess.sh("ls \(shq(m.path + "/deep")) > /dev/null", timeout: 60)
        XCTAssertTrue(lsHung.succeeded, "ls of a listed folder with a hanging server: \(lsHung)")
        XCTAssertLessThan(lsHung.elapsed, 10, "ls of a listed folder with a hanging server took \(lsHung.elapsed) s")
        hole.close()
        print("server gone: refused read failed in \(String(format: "%.1f", refused.elapsed)) s, hanging-server read in \(String(format: "%.1f", hung.elapsed)) s")

        // Back up: reads work again.
        try s.start()
        restarted = true
        let back = try TimedProcess.sh("cat \(shq(m.path + "/many/" + TreeGenerator.smallFileName(13)))", timeout: 60)
        XCTAssertEqual(Data(back.stdout.utf8), TreeGenerator.smallFileContent(13), "read after the server came back: \(back)")
    }

    /// The kernel's reads are small enough for libfuse to splice each reply from the cache file
    /// through a pipe (reply + header + slack within pipe-max-size); larger reads are copied
    /// through a malloc'ed buffer per read.
    func testReadsAreSizedToBeSpliced() throws {
        let (m, _) = try makeMount()
        try m.mountOrThrow()
        let options = MountTable.superOptions(at: m.path)
        let maxRead = options.first { $0.hasPrefix("max_read=") }.flatMap { Int($0.dropFirst(9)) }
        let pipeMax = Int((try String(contentsOfFile: "/proc/sys/fs/pipe-max-size", encoding: .utf8))
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        XCTAssertNotNil(maxRead, "no max_read among the mount's options: \(options)")
        if let maxRead {
            XCTAssertLessThanOrEqual(maxRead + 16 << 10, pipeMax, "a \(maxRead)-byte reply cannot be spliced through a \(pipeMax)-byte pipe")
            XCTAssertGreaterThanOrEqual(maxRead, 128 << 10)
        }
    }

    /// Reading the whole 64 MiB file once fetches each byte about once (no re-downloads), with the right bytes.
    func testSequentialReadFetchesEachByteOnce() throws {
        let (m, s) = try makeMount()
        try m.mountOrThrow()
        let mark = s.accessLogLines().count
        let started = Date()
        let mr = try TimedProcess.sh("sha256sum < \(shq(m.path + "/" + TreeGenerator.bigFile))", timeout: 300)
        let took = Date().timeIntervalSince(started)
        let sr = try TimedProcess.sh("sha256sum < \(shq(s.documentRoot.path + "/" + TreeGenerator.bigFile))", timeout: 60)
        XCTAssertTrue(mr.succeeded, "\(mr)")
        XCTAssertEqual(mr.stdout, sr.stdout, "sha256 of big.bin read sequentially through the mount")
        let u = try m.unmount()
        XCTAssertTrue(u.succeeded, "favfs unmount: \(u)")
        usleep(300_000)
        let gets = s.accessLogLines().dropFirst(mark).filter { $0.hasPrefix("GET /files/\(TreeGenerator.bigFile) ") }
        let bytes = gets.reduce(0) { $0 + (Int($1.split(separator: " ").dropFirst(3).first ?? "") ?? 0) }
        print("sequential read: \(gets.count) GETs, \(bytes) bytes, \(String(format: "%.1f", took)) s")
        XCTAssertGreaterThanOrEqual(bytes, TreeGenerator.bigFileSize, "fewer bytes fetched than the file holds: \(gets.prefix(10))")
        XCTAssertLessThanOrEqual(bytes, TreeGenerator.bigFileSize + TreeGenerator.bigFileSize / 10,
                                 "a sequential read fetched \(bytes) bytes for a 64 MiB file: \(gets.prefix(40))")
    }
}
