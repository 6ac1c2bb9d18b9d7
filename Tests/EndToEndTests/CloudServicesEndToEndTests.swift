import Foundation
import TestSupport
import XCTest

/// Dropbox and OneDrive mounts against their fixtures, through the release binary, for what
/// the per-remote suites do not cover: a pinned folder is downloaded and stays readable while
/// the service hangs; a change made at the service shows without the poller (the long poll;
/// delta), timed; a folder never listed fails within `--timeout` while it hangs; a file written
/// then, with the daemon killed (-9) before it could upload, reaches the service after a
/// remount of the same cache dir.
final class CloudServicesEndToEndTests: XCTestCase {
    func testDropbox() throws {
        try E2EGate.require(apache: false)
        let s = try DropboxServer.started()
        defer { s.resume(); s.remove() }
        try check(ConformanceRemote(url: "dropbox:///", options: ["client_id": s.clientID, "endpoint": s.endpoint], secret: s.refreshToken),
                  served: s.root, pause: s.pause, resume: s.resume, log: s.log)
    }

    func testOneDrive() throws {
        try E2EGate.require(apache: false)
        let s = try OneDriveServer.started()
        defer { s.resume(); s.remove() }
        try check(ConformanceRemote(url: "onedrive:///", options: ["client_id": s.clientID, "endpoint": s.endpoint], secret: s.refreshToken),
                  served: s.root, pause: s.pause, resume: s.resume, log: s.log)
    }

    private func check(_ remote: ConformanceRemote, served: URL, pause: () -> Void, resume: () -> Void, log: () -> String,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let big = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) })
        try DirectorySeeding.seed(served, files: ["docs/a.txt": Data("a\n".utf8), "docs/b.bin": big,
                                                  "other/deep/deeper/x.txt": Data("x\n".utf8)], folders: [])
        let cache = URL(fileURLWithPath: "/tmp/favfs-cloud-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: cache) }
        let args = ["--timeout", "5", "--poll-interval", "600", "--dir-cache-time", "3600"]
        let first = try MountedFavFS(remote: remote.urlWithOptions, cacheDir: cache)
        defer { first.tearDown() }
        try first.mountOrThrow(extraArgs: args, password: remote.secret)
        let fm = FileManager.default
        func names(_ folder: String) -> Set<String> { Set((try? fm.contentsOfDirectory(atPath: first.path + folder)) ?? []) }
        XCTAssertEqual(names("/docs"), ["a.txt", "b.bin"], file: file, line: line)

        // Pinned: downloaded in the background.
        let pin = try TimedProcess.run(FavFSBinary.path, ["pin", first.path + "/docs"], timeout: 60)
        XCTAssertTrue(pin.succeeded, "\(pin)", file: file, line: line)
        XCTAssertTrue(waitUntil(60) { self.state(first, "docs/b.bin") == "materialized, pinned" },
                      "docs/b.bin: \(state(first, "docs/b.bin") ?? "nil"); \(first.logProblems())", file: file, line: line)

        // Pushed: the poller would wait 10 minutes, and the listing is cached for an hour.
        sleep(1)  // the feed has its cursor (taken at the mount)
        try Data("new\n".utf8).write(to: served.appendingPathComponent("docs/new.txt"))
        let changed = Date()
        XCTAssertTrue(waitUntil(30) { names("/docs").contains("new.txt") }, "the change did not show: \(names("/docs"))", file: file, line: line)
        print("\(remote.url): a change at the service showed after \(String(format: "%.1f", Date().timeIntervalSince(changed))) s")

        // The service hangs.
        pause()
        XCTAssertTrue(fm.contents(atPath: first.path + "/docs/b.bin") == big, "the pinned file is not readable while the service hangs",
                      file: file, line: line)
        let ls = try TimedProcess.sh("ls \(shq(first.path))/other/deep/deeper", timeout: 120)
        XCTAssertFalse(ls.succeeded, "ls of a never-listed folder on a hung service: \(ls)", file: file, line: line)
        XCTAssertLessThan(ls.elapsed, 25, "ls took \(ls.elapsed) s with --timeout 5", file: file, line: line)
        let written = Data("written while the service hung\n".utf8)
        try written.write(to: URL(fileURLWithPath: first.path + "/docs/k.txt"))
        guard let pid = MountedFavFS.processes(mentioning: first.path).first else { return XCTFail("no daemon", file: file, line: line) }
        kill(pid, SIGKILL)
        first.tearDown()
        resume()
        XCTAssertFalse(fm.fileExists(atPath: served.appendingPathComponent("docs/k.txt").path), "uploaded although the service hung", file: file, line: line)

        // The journal brings it up at the next mount of the cache dir.
        let second = try MountedFavFS(remote: remote.urlWithOptions, cacheDir: cache)
        defer { second.tearDown() }
        try second.mountOrThrow(extraArgs: args, password: remote.secret)
        XCTAssertTrue(waitUntil(60) { fm.contents(atPath: served.appendingPathComponent("docs/k.txt").path) == written },
                      "the file written before the kill did not reach the service: \(second.logProblems())\n\(log().suffix(2000))", file: file, line: line)
        XCTAssertTrue(try second.unmount().succeeded, file: file, line: line)
    }

    private func state(_ m: MountedFavFS, _ path: String) -> String? {
        guard let r = try? TimedProcess.run(FavFSBinary.path, ["status", m.path + "/" + path], timeout: 30), r.succeeded else { return nil }
        return r.stdout.split(separator: "\t").first.map(String.init)
    }
}
