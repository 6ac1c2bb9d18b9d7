import Foundation
import TestSupport
import XCTest

/// Pinning on a WebDAV mount: a pinned folder is downloaded in the background, what appears in
/// it later is pinned too, and after an unmount everything pinned is readable with the server
/// stopped; unpinned content is not kept. Pinning through `setfattr` does the same.
final class PinningEndToEndTests: XCTestCase {
    func testPinnedContentIsDownloadedKeptAndReadableOffline() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        func random(_ n: Int, _ seed: Int) -> Data { Data((0..<n).map { UInt8(truncatingIfNeeded: ($0 &* 2654435761 &+ seed) >> 7) }) }
        var files = ["p/a.bin": random(3 << 20, 1), "p/sub/b.bin": random(700_000, 2),
                     "loose.bin": random(200_000, 3), "unpinned.bin": random(300_000, 4)]
        try apache.write(files)
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--poll-interval", "1", "--timeout", "5"])

        let pin = try TimedProcess.run(FavFSBinary.path, ["pin", m.path + "/p"], timeout: 60)
        XCTAssertTrue(pin.succeeded, "\(pin)")
        XCTAssertTrue(waitUntil(60) { self.pinned(m)?.files == 2 }, "the pinned folder was not downloaded: \(String(describing: self.pinned(m)))")
        XCTAssertEqual(pinned(m)?.bytes, Int64(files["p/a.bin"]!.count + files["p/sub/b.bin"]!.count))
        XCTAssertEqual(state(m, "p/a.bin"), "materialized, pinned")
        XCTAssertEqual(state(m, "unpinned.bin"), "placeholder")

        // Appears later under the pinned folder: pinned and downloaded too.
        files["p/sub/later.bin"] = random(500_000, 5)
        try files["p/sub/later.bin"]!.write(to: apache.documentRoot.appendingPathComponent("p/sub/later.bin"))
        try apache.fixOwnership()
        XCTAssertTrue(waitUntil(60) { self.state(m, "p/sub/later.bin") == "materialized, pinned" },
                      "a file added under the pin was not downloaded: \(state(m, "p/sub/later.bin") ?? "nil")")

        // Pinned with setfattr.
        try Python.setxattr(m.path + "/loose.bin", "user.favfs.pin", "1")
        XCTAssertTrue(waitUntil(60) { self.state(m, "loose.bin") == "materialized, pinned" }, state(m, "loose.bin") ?? "nil")
        // Read but not pinned: evicted at unmount.
        XCTAssertEqual(FileManager.default.contents(atPath: m.path + "/unpinned.bin"), files["unpinned.bin"])
        // An item pinned through its folder cannot be unpinned alone.
        let refused = try TimedProcess.run(FavFSBinary.path, ["unpin", m.path + "/p/a.bin"], timeout: 60)
        XCTAssertEqual(refused.status, 65, "\(refused)")
        XCTAssertTrue(refused.stderr.contains("pinned through /p"), refused.stderr)
        XCTAssertTrue(try m.unmount().succeeded)

        // Server gone: the pinned files read back byte-exact from the cache; the rest does not.
        apache.stop()
        try m.mountOrThrow(extraArgs: ["--poll-interval", "1", "--timeout", "5"])
        for path in ["p/a.bin", "p/sub/b.bin", "p/sub/later.bin", "loose.bin"] {
            XCTAssertEqual(FileManager.default.contents(atPath: m.path + "/" + path), files[path], "\(path) offline")
        }
        let offline = try TimedProcess.sh("cat \(shq(m.path + "/unpinned.bin")) > /dev/null", timeout: 60)
        XCTAssertFalse(offline.succeeded, "unpinned content was kept across the unmount")

        // Unpinned: evicted at the next unmount.
        XCTAssertTrue(try TimedProcess.run(FavFSBinary.path, ["unpin", m.path + "/p"], timeout: 60).succeeded)
        XCTAssertEqual(try Python.getxattr(m.path + "/p/a.bin", "user.favfs.pin"), "0")
        let out = try m.unmount()
        XCTAssertTrue(out.succeeded, "\(out)")
        XCTAssertTrue(out.stdout.contains("evicted 3 cached files"), "\(out)")
    }

    private struct Pins: Decodable { var files: Int; var bytes: Int64 }
    private struct Mount: Decodable { var mountpoint: String; var pins: Pins? }
    private struct Report: Decodable { var mounts: [Mount] }

    /// This test's mount's pins (`status` lists every mount on the machine, others' too).
    private func pinned(_ m: MountedFavFS) -> Pins? {
        guard let r = try? TimedProcess.run(FavFSBinary.path, ["status", "--json"], timeout: 30), r.succeeded,
              let report = try? JSONDecoder().decode(Report.self, from: Data(r.stdout.utf8)) else { return nil }
        let ours = URL(fileURLWithPath: m.path).resolvingSymlinksInPath().path
        return report.mounts.first { URL(fileURLWithPath: $0.mountpoint).resolvingSymlinksInPath().path == ours }?.pins
    }

    private func state(_ m: MountedFavFS, _ path: String) -> String? {
        guard let r = try? TimedProcess.run(FavFSBinary.path, ["status", m.path + "/" + path], timeout: 30), r.succeeded else { return nil }
        return r.stdout.split(separator: "\t").first.map(String.init)
    }
}

/// Extended attributes through Python's os module (no attr package needed).
enum Python {
    static func getxattr(_ path: String, _ name: String) throws -> String {
        let r = try TimedProcess.run("/usr/bin/python3", ["-c", "import os,sys; sys.stdout.write(os.getxattr(sys.argv[1], sys.argv[2]).decode())", path, name], timeout: 30)
        guard r.succeeded else { throw ShellError("getxattr \(name) \(path): \(r.stderr)") }
        return r.stdout
    }
    /// The errno name getxattr fails with (e.g. "ENODATA"), or nil when it succeeds.
    static func getxattrError(_ path: String, _ name: String) throws -> String? {
        let r = try TimedProcess.run("/usr/bin/python3", ["-c", """
            import errno, os, sys
            try: os.getxattr(sys.argv[1], sys.argv[2])
            except OSError as e: print(errno.errorcode[e.errno])
            """, path, name], timeout: 30)
        let out = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return out.isEmpty ? nil : out
    }
    static func setxattr(_ path: String, _ name: String, _ value: String) throws {
        if let e = try setxattrError(path, name, value) { throw ShellError("setxattr \(name)=\(value) \(path): \(e)") }
    }
    static func setxattrError(_ path: String, _ name: String, _ value: String) throws -> String? {
        let r = try TimedProcess.run("/usr/bin/python3", ["-c", """
            import errno, os, sys
            try: os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode())
            except OSError as e: print(errno.errorcode[e.errno])
            """, path, name, value], timeout: 60)
        let out = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return out.isEmpty ? nil : out
    }
    static func listxattr(_ path: String) throws -> [String] {
        let r = try TimedProcess.run("/usr/bin/python3", ["-c", "import os,sys; print('\\n'.join(os.listxattr(sys.argv[1])))", path], timeout: 30)
        guard r.succeeded else { throw ShellError("listxattr \(path): \(r.stderr)") }
        return r.stdout.split(separator: "\n").map(String.init)
    }
}
