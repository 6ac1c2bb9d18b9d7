import Foundation
import TestSupport
import XCTest

/// A file changed at the server while favfs was not mounted, read right after the next mount
/// (before its folder is listed again, so the open trusts the earlier mount's placeholder):
/// the reader gets the new version whole when it is as large or larger than the old one — no
/// `ESTALE`, no bytes of the old version, no read cut at the old size. A smaller one may fail
/// once with `ESTALE` (the kernel would pad it to the old size with zeros), never with wrong
/// bytes; the next read has it. On Apache (ETag) and a local folder.
final class ChangedWhileUnmountedEndToEndTests: ScratchMountTestCase {
    override class var needsApache: Bool { false }
    override class var scratchPrefix: String { "favfs-changed" }

    func testLocalFolder() throws {
        let served = scratch.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        try check(remote: "file://" + served.path, serverRoot: served) {}
    }

    func testApache() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        try apache.start()
        defer { apache.remove() }
        try check(remote: apache.davURL, serverRoot: apache.documentRoot) { try apache.fixOwnership() }
    }

    /// Old and new contents per file: one grows past a page and the old size, one shrinks,
    /// one keeps its size (only an ETag or time tells them apart).
    private static let files: [(name: String, old: String, new: String)] = [
        ("grows.txt", "the first version\n", String(repeating: "the second, longer version\n", count: 400)),
        ("shrinks.txt", String(repeating: "a long first version\n", count: 300), "short\n"),
        ("same-size.txt", "version AAAA\n", "version BBBB\n"),
    ]

    private static func folder(_ name: String) -> String { "docs-" + name.prefix { $0 != "." } }

    private func check(remote: String, serverRoot: URL, fixOwnership: () throws -> Void) throws {
        // A folder each: each file is the first read in its folder, before that folder's
        // listing is revalidated.
        func url(_ name: String) -> URL { serverRoot.appendingPathComponent(Self.folder(name) + "/" + name) }
        for f in Self.files {
            try FileManager.default.createDirectory(at: url(f.name).deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(f.old.utf8).write(to: url(f.name))
        }
        try fixOwnership()

        let first = try MountedFavFS(remote: remote)
        mounts.append(first)
        try first.mountOrThrow()
        for f in Self.files {
            XCTAssertEqual(try String(contentsOfFile: first.path + "/" + Self.folder(f.name) + "/" + f.name, encoding: .utf8), f.old, f.name)
        }
        let u = try first.unmount()
        XCTAssertTrue(u.succeeded, "favfs unmount: \(u)")

        // Changed at the server while nothing is mounted; an hour later, so a size-and-time
        // version differs too.
        for f in Self.files {
            try Data(f.new.utf8).write(to: url(f.name))
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(3600)], ofItemAtPath: url(f.name).path)
        }
        try fixOwnership()

        // A long poll and folder cache time: nothing lists the folder again before the reads.
        let second = try MountedFavFS(remote: remote, cacheDir: first.cacheDir)
        mounts.append(second)
        try second.mountOrThrow(extraArgs: ["--poll-interval", "600", "--dir-cache-time", "3600"])
        for f in Self.files {
            let path = second.path + "/" + Self.folder(f.name) + "/" + f.name
            let r = try TimedProcess.sh("cat \(shq(path))", timeout: 60)
            if f.new.count < f.old.count && r.status != 0 {
                XCTAssertTrue(r.stderr.contains("Stale file handle"), "\(f.name): \(r.stderr)")
                XCTAssertEqual(r.stdout, "", "\(f.name): bytes before the error")
            } else {
                XCTAssertEqual(r.status, 0, "\(f.name): cat right after the remount failed: \(r.stderr)\n\(second.logProblems())")
                XCTAssertEqual(r.stdout.count, f.new.count, "\(f.name): \(r.stdout.count) bytes read, the new version has \(f.new.count)")
                XCTAssertEqual(r.stdout, f.new, "\(f.name): not the new version")
            }
            let again = try TimedProcess.sh("cat \(shq(path)); stat -c %s \(shq(path))", timeout: 60)
            XCTAssertEqual(again.stdout, f.new + "\(f.new.utf8.count)\n", "\(f.name): read again")
        }
    }
}
