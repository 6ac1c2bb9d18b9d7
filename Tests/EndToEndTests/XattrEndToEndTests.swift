import Foundation
import TestSupport
import XCTest

/// An item's state as extended attributes on a WebDAV mount: placeholder, partial, materialized,
/// dirty while a descriptor writes, the server's ETag, the pin, and the right errors for
/// everything else (`user.*` names ENODATA; `security.*` and `system.*`, the kernel's and `ls`'s
/// probes, ENOTSUP, so that `ls -l` asks once per mount instead of once per file).
final class XattrEndToEndTests: XCTestCase {
    func testStateEtagAndPinAsExtendedAttributes() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        let big = Data((0..<(24 << 20)).map { UInt8(truncatingIfNeeded: $0 >> 9) })
        try big.write(to: apache.documentRoot.appendingPathComponent("big.bin"))
        try FileManager.default.createDirectory(at: apache.documentRoot.appendingPathComponent("folder"), withIntermediateDirectories: true)
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow()
        let file = m.path + "/big.bin"
        let state = { try Python.getxattr(file, "user.favfs.state") }

        XCTAssertEqual(try Set(Python.listxattr(file)), ["user.favfs.state", "user.favfs.pin", "user.favfs.etag"])
        XCTAssertEqual(try state(), "placeholder")
        XCTAssertEqual(try Python.getxattr(file, "user.favfs.pin"), "0")
        // The ETag Apache sends for the file.
        let head = try TimedProcess.run("/usr/bin/curl", ["-sI", apache.baseURL + "big.bin"], timeout: 30)
        let etag = head.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }
            .map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(try Python.getxattr(file, "user.favfs.etag"), etag)

        // The first 4 KiB: partial (some percentage short of 100).
        _ = try TimedProcess.sh("head -c 4096 \(shq(file)) > /dev/null", timeout: 60)
        let partial = try state()
        XCTAssertTrue(partial.hasPrefix("partial ") && partial != "partial 100%", partial)
        XCTAssertEqual(FileManager.default.contents(atPath: file), big)
        XCTAssertEqual(try state(), "materialized")
        XCTAssertEqual(try Python.getxattr(m.path + "/folder", "user.favfs.state"), "folder")

        // Dirty while a descriptor writes; clean once closed and uploaded.
        let writer = try TimedProcess.run("/usr/bin/python3", ["-c", """
            import os, sys, time
            fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.write(fd, b"new content\\n")
            print(os.getxattr(sys.argv[1], "user.favfs.state").decode(), flush=True)
            os.close(fd)
            """, m.path + "/note.txt"], timeout: 60)
        XCTAssertEqual(writer.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "dirty", "\(writer)")
        XCTAssertTrue(waitUntil(30) { (try? Python.getxattr(self.mPath(m, "note.txt"), "user.favfs.state")) == "materialized" })
        XCTAssertEqual(try String(contentsOf: apache.documentRoot.appendingPathComponent("note.txt"), encoding: .utf8), "new content\n")

        // Pin through the attribute.
        XCTAssertNil(try Python.setxattrError(file, "user.favfs.pin", "1"))
        XCTAssertEqual(try Python.getxattr(file, "user.favfs.pin"), "1")
        XCTAssertEqual(try Python.setxattrError(file, "user.favfs.pin", "yes"), "EINVAL")
        XCTAssertEqual(try Python.setxattrError(file, "user.favfs.state", "dirty"), "EPERM")
        XCTAssertEqual(try Python.setxattrError(file, "user.comment", "x"), "ENOTSUP")
        XCTAssertEqual(try Python.getxattrError(file, "user.comment"), "ENODATA")
        XCTAssertEqual(try Python.getxattrError(file, "security.capability"), "ENOTSUP")
        XCTAssertEqual(try Python.getxattrError(file, "security.selinux"), "ENOTSUP")
        XCTAssertEqual(try Python.getxattrError(file, "system.posix_acl_access"), "ENOTSUP")
        XCTAssertTrue(try m.unmount().succeeded)
    }

    /// `ls -l` asks each file for its SELinux label and ACL unless the file system said it has
    /// none: with ENOTSUP it asks the first file only (a round trip per file was half the time of
    /// a warm `ls -l`). Counted with strace, as `ls` itself sees it.
    func testLsAsksOncePerMount() throws {
        try E2EGate.require(apache: true)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else { throw XCTSkip("strace is not installed (make setup)") }
        let apache = try ApacheServer()
        let folder = apache.documentRoot.appendingPathComponent("many")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for i in 0..<50 { try Data("\(i)".utf8).write(to: folder.appendingPathComponent("f\(i).txt")) }
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow()
        let ls = try TimedProcess.run("/usr/bin/strace", ["-f", "-e", "trace=getxattr,lgetxattr", "ls", "-l", m.path + "/many"], timeout: 60)
        XCTAssertEqual(ls.stdout.split(separator: "\n").filter { $0.contains(".txt") }.count, 50, "\(ls)")
        let probes = ls.stderr.split(separator: "\n").filter { $0.contains("getxattr(") }
        XCTAssertLessThanOrEqual(probes.count, 4, probes.joined(separator: "\n"))
        XCTAssertTrue(probes.allSatisfy { $0.contains("EOPNOTSUPP") || $0.contains("ENOTSUP") }, probes.joined(separator: "\n"))
        XCTAssertTrue(try m.unmount().succeeded)
    }

    /// `--no-xattrs`: the kernel is told there are none (ENOTSUP), and nothing else changes.
    func testNoXattrs() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        try Data("x".utf8).write(to: apache.documentRoot.appendingPathComponent("x.txt"))
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--no-xattrs"])
        XCTAssertEqual(try Python.getxattrError(m.path + "/x.txt", "user.favfs.state"), "ENOTSUP")
        XCTAssertEqual(FileManager.default.contents(atPath: m.path + "/x.txt"), Data("x".utf8))
        XCTAssertTrue(try m.unmount().succeeded)
    }

    private func mPath(_ m: MountedFavFS, _ name: String) -> String { m.path + "/" + name }
}
