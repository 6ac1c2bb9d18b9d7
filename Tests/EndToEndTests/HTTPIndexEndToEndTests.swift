import Foundation
import TestSupport
import XCTest

/// favfs mounting `http://` directory indexes: Apache mod_autoindex (FancyIndexing, Basic auth)
/// and python's http.server, serving the generated tree. The mount is read-only by nature.
final class HTTPIndexEndToEndTests: XCTestCase {
    static let user = "reader", password = "index pässword"
    static let mediumFile = "medium.bin"
    static let mediumSize = 5 * 1024 * 1024 + 123
    nonisolated(unsafe) static var server: ApacheServer?
    var mounts: [MountedFavFS] = []

    /// The shared Apache, created and filled on first use: the tree with 1,050 small files and a 5 MiB file.
    static func sharedServer() throws -> ApacheServer {
        if let server {
            if !server.isRunning { try server.start() }
            return server
        }
        let s = try ApacheServer(auth: .basic(user: user, password: password), mode: .autoindex(fancy: true))
        try fill(s.documentRoot)
        try s.start()
        server = s
        return s
    }

    static func fill(_ root: URL) throws {
        try TreeGenerator(includeBigFile: false, smallFileCount: 1_050).write(into: root)
        try TreeGenerator.writeRandomFile(at: root.appendingPathComponent(mediumFile), size: mediumSize, seed: 7)
        // Older than a second: Apache's ETags are strong then.
        let old = Date().addingTimeInterval(-600)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: root.appendingPathComponent(mediumFile).path)
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

    private func mountApache() throws -> (MountedFavFS, ApacheServer) {
        let s = try Self.sharedServer()
        let m = try MountedFavFS(remote: "http://\(Self.user)@127.0.0.1:\(s.port)/files/")
        mounts.append(m)
        try m.mountOrThrow(password: Self.password)
        return (m, s)
    }

    /// Every path, kind, size and mtime, and the sha256 of every file, equal the server's.
    func testFullTreeMatchesServer() throws {
        let (m, s) = try mountApache()
        try SharedChecks.treeEquality(mount: m.path, server: s.documentRoot.path)
    }

    func testRangedReadsOfALargerFile() throws {
        let (m, s) = try mountApache()
        let mark = s.accessLogLines().count
        for (offset, count) in [(0, 4096), (3 * 1024 * 1024 + 5, 70_000), (Self.mediumSize - 100, 100)] {
            func cmd(_ root: String) -> String {
                "set -o pipefail; dd if=\(shq(root + "/" + Self.mediumFile)) iflag=skip_bytes,count_bytes skip=\(offset) count=\(count) bs=65536 status=none | sha256sum"
            }
            let mr = try TimedProcess.sh(cmd(m.path), timeout: 60)
            let sr = try TimedProcess.sh(cmd(s.documentRoot.path), timeout: 60)
            XCTAssertTrue(mr.succeeded, "\(mr)")
            XCTAssertEqual(mr.stdout, sr.stdout, "\(count) bytes at \(offset)")
        }
        let gets = s.accessLogLines().dropFirst(mark).filter { $0.hasPrefix("GET /files/\(Self.mediumFile) ") }
        XCTAssertTrue(gets.contains { $0.contains(" 206 ") }, "ranged GETs: \(gets)")
    }

    /// touch, mkdir, rm, mv, writes, ln -s, chmod: all EROFS, nothing changes at the server.
    func testChangesAreReadOnly() throws {
        let (m, s) = try mountApache()
        try SharedChecks.readOnly(mount: m.path, server: s.documentRoot.path)
    }

    func testWrongPasswordFails() throws {
        let s = try Self.sharedServer()
        let m = try MountedFavFS(remote: "http://\(Self.user)@127.0.0.1:\(s.port)/files/")
        mounts.append(m)
        let r = try m.mount(password: "wrong", timeout: 60)
        XCTAssertNotEqual(r.status, 0, "mount with a wrong password succeeded: \(r)")
        XCTAssertFalse(r.timedOut, "\(r)")
        XCTAssertFalse(m.isMounted)
    }

    /// python's server: names only, no ETags, Range ignored, HTTP/1.0.
    func testPythonServerTreeMatches() throws {
        guard FileManager.default.isExecutableFile(atPath: PythonHTTPServer.python) else {
            if TestEnvironment.isCI { throw ShellError("CI=true and python3 is missing") }
            throw XCTSkip("python3 is missing")
        }
        let py = try PythonHTTPServer()
        defer { py.remove() }
        try TreeGenerator(includeBigFile: false, smallFileCount: 200).write(into: py.documentRoot)
        try py.start()
        let m = try MountedFavFS(remote: py.baseURL)
        mounts.append(m)
        try m.mountOrThrow()
        try SharedChecks.treeEquality(mount: m.path, server: py.documentRoot.path)
        let touch = try TimedProcess.sh("touch \(shq(m.path + "/new"))", timeout: 30)
        XCTAssertTrue(touch.stderr.contains("Read-only file system"), "\(touch)")
    }
}
