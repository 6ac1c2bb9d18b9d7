import Foundation
import TestSupport
import XCTest

/// `favfs mount` fails cleanly, with a message, in bounded time.
final class MountErrorEndToEndTests: XCTestCase {
    var mounts: [MountedFavFS] = []
    var temps: [URL] = []

    override func setUpWithError() throws {
        try E2EGate.require(apache: false)
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        for t in temps { try? FileManager.default.removeItem(at: t) }
        mounts = []
        temps = []
        super.tearDown()
    }

    func make(_ remote: String, createMountPoint: Bool = true) throws -> MountedFavFS {
        let m = try MountedFavFS(remote: remote, createMountPoint: createMountPoint)
        mounts.append(m)
        return m
    }

    /// A small local folder to mount.
    func smallFolder() throws -> URL {
        let d = URL(fileURLWithPath: "/tmp").appendingPathComponent("favfs-e2e-small-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        try Data("hello\n".utf8).write(to: d.appendingPathComponent("hello.txt"))
        temps.append(d)
        return d
    }

    func testUnreachableServerWithEmptyCacheFails() throws {
        let port = try FreePort.next()   // nothing listens there
        let remote = "dav://127.0.0.1:\(port)/files/"
        let m = try make(remote)
        let r = try m.mount(timeout: 90)
        XCTAssertEqual(r.status, 69, "an unreachable server is EX_UNAVAILABLE: \(r)")
        XCTAssertFalse(r.timedOut, "mount of an unreachable server hung: \(r)")
        XCTAssertLessThan(r.elapsed, 60, "mount of an unreachable server took \(r.elapsed) s")
        XCTAssertTrue(r.stderr.contains("127.0.0.1:\(port)"), "the message should name the remote: \(r.stderr)")
        XCTAssertFalse(m.isMounted, "a failed mount left a mount behind")
    }

    func testServerThatNeverAnswersFails() throws {
        let hole = try BlackHoleServer()
        defer { hole.close() }
        let remote = "dav://127.0.0.1:\(hole.port)/files/"
        let m = try make(remote)
        let r = try m.mount(timeout: 150)
        print("mount against a server that never answers: \(String(format: "%.1f", r.elapsed)) s")
        XCTAssertNotEqual(r.status, 0, "mount of a server that never answers succeeded: \(r)")
        XCTAssertFalse(r.timedOut, "mount of a server that never answers hung for 150 s: \(r)")
        XCTAssertLessThan(r.elapsed, 90, "mount of a server that never answers: \(r)")
        XCTAssertTrue(r.stderr.contains("127.0.0.1:\(hole.port)"), "the message should name the remote: \(r.stderr)")
        XCTAssertFalse(m.isMounted, "a failed mount left a mount behind")
    }

    /// `--timeout` bounds the mount's first question too (it took 37 s with `--timeout 5`).
    func testServerThatNeverAnswersFailsWithinTheTimeout() throws {
        let hole = try BlackHoleServer()
        defer { hole.close() }
        let m = try make("dav://127.0.0.1:\(hole.port)/files/")
        let r = try m.mount(extraArgs: ["--timeout", "5"], timeout: 120)
        XCTAssertNotEqual(r.status, 0, "mount of a server that never answers succeeded: \(r)")
        XCTAssertLessThan(r.elapsed, 20, "mount with --timeout 5 took \(r.elapsed) s: \(r)")
        XCTAssertTrue(r.stderr.contains("127.0.0.1:\(hole.port)"), "the message should name the remote: \(r.stderr)")
        XCTAssertFalse(m.isMounted, "a failed mount left a mount behind")
    }

    func testMissingMountPointFails() throws {
        let folder = try smallFolder()
        let m = try make("file://" + folder.path, createMountPoint: false)
        let r = try m.mount(timeout: 60)
        XCTAssertEqual(r.status, 64, "a missing mount point is a usage error (EX_USAGE): \(r)")
        XCTAssertFalse(r.timedOut, "mount on a missing mount point hung: \(r)")
        XCTAssertFalse(r.stderr.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "no message on stderr")
        XCTAssertTrue(r.stderr.contains(m.path), "the message should name the mount point: \(r.stderr)")
        XCTAssertFalse(m.isMounted)
    }

    func testBadURLFails() throws {
        let m = try make("nope://x")
        let r = try m.mount(timeout: 60)
        XCTAssertEqual(r.status, 65, "a bad URL is EX_DATAERR: \(r)")
        XCTAssertFalse(r.timedOut, "mount of nope://x hung: \(r)")
        XCTAssertTrue(r.stderr.contains("nope://x") || r.stderr.contains("nope"), "the message should name the URL: \(r.stderr)")
        XCTAssertFalse(m.isMounted)
    }

    /// A size without a unit is refused (10 bytes of cache is never what was meant), and so is
    /// one past what a 64-bit size holds (it used to trap).
    func testCacheSizesNeedAUnitAndASaneValue() throws {
        let m = try make("file:///tmp")
        for bad in ["10", "1e300T", "lots"] {
            let r = try m.mount(extraArgs: ["--cache-size", bad], timeout: 60)
            XCTAssertEqual(r.status, 64, "--cache-size \(bad) accepted, or not a usage error: \(r)")
            XCTAssertTrue(r.stderr.contains("--cache-size"), "the message should name the option: \(r.stderr)")
            XCTAssertFalse(m.isMounted)
        }
        XCTAssertTrue(try m.mount(extraArgs: ["--cache-size", "10"]).stderr.contains("10M or 10G"))
    }

    /// A cache dir keeps one remote's placeholders and journal: another remote is refused, so it
    /// never serves names that are not there or uploads to the wrong server.
    func testACacheDirOfAnotherRemoteIsRefused() throws {
        let first = try smallFolder(), second = try smallFolder()
        let a = try make("file://" + first.path)
        try a.mountOrThrow()
        XCTAssertTrue(try a.unmount().succeeded)
        let b = try MountedFavFS(remote: "file://" + second.path, cacheDir: a.cacheDir)
        mounts.append(b)
        let r = try b.mount(timeout: 60)
        XCTAssertEqual(r.status, 78, "\(r)")
        XCTAssertTrue(r.stderr.contains("belongs to file://\(first.path)"), "\(r)")
        XCTAssertFalse(b.isMounted)
        try a.mountOrThrow()
        XCTAssertTrue(try a.unmount().succeeded)
    }

    func testBusyMountPointFails() throws {
        let folder = try smallFolder()
        let m = try make("file://" + folder.path)
        try m.mountOrThrow()
        let again = try MountedFavFS(remote: "file://" + folder.path)
        mounts.append(again)
        // Same mount point, another cache dir.
        let r = try TimedProcess.run(FavFSBinary.path, ["mount", m.path, "--remote", "file://" + folder.path,
                                                         "--cache-dir", again.cacheDir.path], timeout: 60)
        XCTAssertNotEqual(r.status, 0, "a second mount on a busy mount point succeeded: \(r)")
        XCTAssertFalse(r.timedOut, "a second mount on a busy mount point hung: \(r)")
        // The first mount still answers.
        let cat = try TimedProcess.sh("cat \(shq(m.path + "/hello.txt"))", timeout: 30)
        XCTAssertEqual(cat.stdout, "hello\n", "first mount after a refused second mount: \(cat)")
    }
}
