import Foundation
import TestSupport
import XCTest

/// Dropbox's long poll through the real binary: with a poll interval of 10 minutes and
/// listings cached for an hour, only the pushed change can make a new file show in time; and
/// an unmount does not wait for the long poll it interrupts.
final class DropboxLongPollEndToEndTests: XCTestCase {
    func testAFileAddedAtDropboxShowsThroughTheLongPollAndUnmountDoesNotWaitForIt() throws {
        try E2EGate.require(apache: false)
        let s = try DropboxServer.started()
        defer { s.remove() }
        try DirectorySeeding.seed(s.root, files: ["a.txt": Data("a\n".utf8), "docs/d.txt": Data("d\n".utf8)], folders: [])
        let remote = ConformanceRemote(url: "dropbox:///", options: ["client_id": s.clientID, "endpoint": s.endpoint], secret: s.refreshToken)
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--poll-interval", "600", "--dir-cache-time", "3600", "--attr-timeout", "60"],
                           password: remote.secret)
        let fm = FileManager.default
        func names(_ folder: String) -> Set<String> { Set((try? fm.contentsOfDirectory(atPath: m.path + folder)) ?? []) }
        XCTAssertEqual(names("/"), ["a.txt", "docs"])
        XCTAssertEqual(names("/docs"), ["d.txt"])
        XCTAssertTrue(waitUntil(20) { s.requests("get_latest_cursor HTTP/1.1\" 200") >= 1 }, "the mount took no change cursor: \(s.log())")
        usleep(500_000)   // its long poll waits now

        try Data("new\n".utf8).write(to: s.root.appendingPathComponent("docs/new.txt"))
        try fm.removeItem(at: s.root.appendingPathComponent("a.txt"))
        let changed = Date()
        XCTAssertTrue(waitUntil(20) { names("/docs") == ["d.txt", "new.txt"] && names("/") == ["docs"] },
                      "after 20 s: / \(names("/")), /docs \(names("/docs")); \(m.logProblems())\nserver: \(s.log().suffix(3000))")
        print("the change showed after \(String(format: "%.1f", Date().timeIntervalSince(changed))) s")
        XCTAssertEqual(fm.contents(atPath: m.path + "/docs/new.txt"), Data("new\n".utf8))
        XCTAssertGreaterThanOrEqual(s.requests("list_folder/continue HTTP/1.1\" 200"), 1, "the change came without list_folder/continue: \(s.log())")

        // A long poll (120 s) is pending again: the unmount cancels it.
        usleep(500_000)
        let asked = Date()
        let r = try m.unmount()
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertLessThan(Date().timeIntervalSince(asked), 10, "the unmount waited for the long poll: \(r)")
        XCTAssertFalse(m.isMounted)
        // The feed ended before the mount closed its database (it is not left running behind).
        let log = (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
        let stopped = log.range(of: "the change feed of dropbox:/// stopped"), unmounted = log.range(of: "unmounted;")
        XCTAssertNotNil(stopped, "the change feed did not stop: \(log.suffix(2000))")
        if let stopped, let unmounted { XCTAssertLessThan(stopped.lowerBound, unmounted.lowerBound, "the feed stopped after the unmount") }
    }
}
