import Foundation
import TestSupport
import XCTest

/// WebDAV with HTTP Basic auth: the user in the URL, the password on stdin.
final class BasicAuthEndToEndTests: XCTestCase {
    static let user = "alice"
    static let password = "s3cret pässword"
    var server: ApacheServer?
    var mounts: [MountedFavFS] = []

    override func setUpWithError() throws {
        try E2EGate.require(apache: true)
        let s = try ApacheServer(auth: .basic(user: Self.user, password: Self.password))
        server = s
        try TreeGenerator(includeBigFile: false, smallFileCount: 20).write(into: s.documentRoot)
        try s.start()
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        mounts = []
        server?.remove()
        server = nil
        super.tearDown()
    }

    var remote: String { "dav://\(Self.user)@127.0.0.1:\(server!.port)/files/" }

    func testListsAndReadsWithPasswordOnStdin() throws {
        let s = try XCTUnwrap(server)
        let m = try MountedFavFS(remote: remote)
        mounts.append(m)
        try m.mountOrThrow(password: Self.password)
        let ls = try TimedProcess.sh("ls \(shq(m.path + "/many"))", timeout: 60)
        XCTAssertTrue(ls.succeeded, "ls: \(ls)")
        XCTAssertEqual(ls.stdout.split(separator: "\n").count, 20, "ls of many/: \(ls.stdout)")
        let cat = try TimedProcess.sh("cat \(shq(m.path + "/awkward/files/a&b"))", timeout: 60)
        XCTAssertTrue(cat.succeeded, "cat: \(cat)")
        XCTAssertEqual(cat.stdout, try String(contentsOf: s.documentRoot.appendingPathComponent("awkward/files/a&b"), encoding: .utf8))
        try SharedChecks.treeEquality(mount: m.path, server: s.documentRoot.path)
        // The password is not on the command line of the mount's processes.
        for pid in MountedFavFS.processes(mentioning: m.path) {
            let cmdline = String(decoding: FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data(), as: UTF8.self)
            XCTAssertFalse(cmdline.contains(Self.password), "the password shows in the command line of pid \(pid)")
        }
    }

    func testWrongPasswordFails() throws {
        let m = try MountedFavFS(remote: remote)
        mounts.append(m)
        let r = try m.mount(password: "wrong", timeout: 60)
        XCTAssertNotEqual(r.status, 0, "mount with a wrong password succeeded: \(r)")
        XCTAssertFalse(r.timedOut, "mount with a wrong password hung: \(r)")
        let msg = r.stderr.lowercased()
        XCTAssertTrue(msg.contains("authenticat") || msg.contains("denied"), "the message should mention authentication: \(r.stderr)")
        XCTAssertFalse(m.isMounted)
    }

    /// The same user and password against HTTP Digest auth (the fixture supports it; libcurl can answer either).
    func testDigestAuthListsAndReads() throws {
        let d = try ApacheServer(auth: .digest(user: Self.user, password: Self.password))
        defer { d.remove() }
        try TreeGenerator(includeBigFile: false, smallFileCount: 20).write(into: d.documentRoot)
        try d.start()
        let m = try MountedFavFS(remote: "dav://\(Self.user)@127.0.0.1:\(d.port)/files/")
        mounts.append(m)
        try m.mountOrThrow(password: Self.password)
        let cat = try TimedProcess.sh("cat \(shq(m.path + "/many/f00007.txt"))", timeout: 60)
        XCTAssertTrue(cat.succeeded, "cat: \(cat)")
        XCTAssertEqual(Data(cat.stdout.utf8), TreeGenerator.smallFileContent(7))
        let ls = try TimedProcess.sh("ls \(shq(m.path + "/awkward/dirs"))", timeout: 60)
        XCTAssertEqual(ls.stdout.split(separator: "\n").count, TreeGenerator.awkwardNames.count, "ls: \(ls)")
    }
}
