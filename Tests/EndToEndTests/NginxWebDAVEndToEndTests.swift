import Foundation
import TestSupport
import XCTest

/// nginx's WebDAV gives no ETags in PROPFIND, has no locks and ignores If-Match: another
/// client's edit must still never be overwritten silently. favfs compares size and mtime in a
/// PROPFIND right before the PUT (the window that remains is that round trip, README).
final class NginxWebDAVEndToEndTests: XCTestCase {
    func testAnotherWritersEditBecomesTheNameAndOursAConflictCopy() throws {
        try E2EGate.require(apache: false)
        guard NginxServer.hasWebDAV else {
            if TestEnvironment.isCI { throw ShellError("CI=true and nginx's WebDAV (libnginx-mod-http-dav-ext) is missing") }
            throw XCTSkip("nginx's WebDAV (libnginx-mod-http-dav-ext) is missing")
        }
        let server = try NginxServer(webdav: ("favfs", "secret"))
        defer { server.remove() }
        let file = server.documentRoot.appendingPathComponent("notes.txt")
        try Data("v1\n".utf8).write(to: file)
        try server.fixOwnership()
        try server.start()
        let m = try MountedFavFS(remote: "dav://favfs@127.0.0.1:\(server.port)/files/")
        defer { m.tearDown() }
        try m.mountOrThrow(password: "secret")
        XCTAssertEqual(FileManager.default.contents(atPath: m.path + "/notes.txt"), Data("v1\n".utf8))
        // Another client's edit, a second later (nginx's times have whole seconds).
        sleep(1)
        try Data("v2 from elsewhere\n".utf8).write(to: file)
        try server.fixOwnership()
        let append = try TimedProcess.sh("printf 'appended here\\n' >> \(shq(m.path + "/notes.txt"))", timeout: 60)
        XCTAssertTrue(append.succeeded, "\(append)")
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual(FileManager.default.contents(atPath: file.path), Data("v2 from elsewhere\n".utf8),
                       "the other writer's edit was overwritten")
        let copies = try FileManager.default.contentsOfDirectory(atPath: server.documentRoot.path).filter { $0.contains("conflict") }
        XCTAssertEqual(copies.count, 1, "no conflict copy: \(copies)")
        if let copy = copies.first {
            XCTAssertEqual(FileManager.default.contents(atPath: server.documentRoot.appendingPathComponent(copy).path),
                           Data("v1\nappended here\n".utf8))
        }
        let log = (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
        XCTAssertTrue(log.contains("no ETags"), "the mount did not say how it checks versions on this server")
    }
}
