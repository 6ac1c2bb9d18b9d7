// End-to-end tests: mount the real favfs binary ($FAVFS_BIN, else .build/debug/favfs) and drive it
// with ordinary tools. Run: swift build --build-tests && swift test --skip-build --filter EndToEndTests
// Needs root (FUSE, Apache as www-data), /dev/fuse, fusermount3, apache2; skips without them unless CI=true.
import Foundation
import TestSupport
import XCTest

/// Skips (or, under CI=true, fails) when what an end-to-end test needs is missing.
enum E2EGate {
    /// For Swift Testing suites (no XCTSkip there): missing FUSE or the binary is an error.
    static func requireFUSE() throws {
        if !TestEnvironment.hasFUSE { throw ShellError("end-to-end tests need /dev/fuse") }
        if !FavFSBinary.isAvailable { throw ShellError("end-to-end tests need the favfs binary at \(FavFSBinary.path) (set FAVFS_BIN or swift build)") }
    }

    static func require(apache: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        var missing: [String] = []
        if !TestEnvironment.hasFUSE { missing.append("/dev/fuse") }
        if !FileManager.default.isExecutableFile(atPath: "/usr/bin/fusermount3") { missing.append("fusermount3") }
        if apache && !ApacheServer.isAvailable { missing.append("apache2 (/usr/sbin/apache2)") }
        if !FavFSBinary.isAvailable { missing.append("the favfs binary at \(FavFSBinary.path) (set FAVFS_BIN or swift build)") }
        guard !missing.isEmpty else { return }
        let why = "end-to-end tests need: " + missing.joined(separator: ", ")
        if TestEnvironment.isCI { throw ShellError("CI=true and " + why) }
        throw XCTSkip(why)
    }
}

extension XCTestCase {
    /// A private Apache mod_dav and favfs mounted over it (`extraArgs` given to `favfs mount`),
    /// both gone when the test ends.
    func mountedOverApache(extraArgs: [String] = []) throws -> (apache: ApacheServer, mount: MountedFavFS) {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        try apache.start()
        addTeardownBlock { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        addTeardownBlock { m.tearDown() }
        try m.mountOrThrow(extraArgs: extraArgs)
        return (apache, m)
    }
}

/// A test case with a scratch folder under /tmp (`scratch`) and the mounts it made (`mounts`):
/// both go at tearDown. Subclasses say whether they need Apache and how the folder is named.
class ScratchMountTestCase: XCTestCase {
    var mounts: [MountedFavFS] = []
    var scratch: URL!
    /// The tests need Apache (skipped without it, failed under CI=true).
    class var needsApache: Bool { false }
    /// The scratch folder is /tmp/`scratchPrefix`-XXXXXXXX.
    class var scratchPrefix: String { "favfs-e2e-scratch" }

    override func setUpWithError() throws {
        try E2EGate.require(apache: type(of: self).needsApache)
        scratch = URL(fileURLWithPath: "/tmp/\(type(of: self).scratchPrefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        mounts = []
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
        super.tearDown()
    }
}

/// One entry of a tree listing, as `find -printf` sees it.
struct TreeEntry: Equatable, CustomStringConvertible {
    let kind: String   // f, d, l
    let size: Int64
    let mtime: Int     // whole seconds
    var description: String { "\(kind) size=\(size) mtime=\(mtime)" }
}

enum Tree {
    /// Relative path -> entry, for everything under `root` (not `root` itself).
    static func listing(_ root: String, timeout: Double = 300) throws -> [String: TreeEntry] {
        let r = try TimedProcess.sh("cd \(shq(root)) && find . -mindepth 1 -printf '%y\\t%s\\t%T@\\t%P\\0'", timeout: timeout)
        guard r.succeeded else { throw ShellError("find in \(root) failed: \(r)") }
        var out: [String: TreeEntry] = [:]
        for rec in r.stdout.split(separator: "\0") {
            let f = rec.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false)
            guard f.count == 4 else { throw ShellError("bad find record: \(rec.debugDescription)") }
            let secs = Int(f[2].split(separator: ".").first ?? "") ?? Int.min
            out[String(f[3])] = TreeEntry(kind: String(f[0]), size: Int64(f[1]) ?? -1, mtime: secs)
        }
        return out
    }

    /// `sha256sum` of every regular file under `root`, sorted by path (relative paths).
    static func hashes(_ root: String, timeout: Double = 600) throws -> TimedProcess.Result {
        try TimedProcess.sh("cd \(shq(root)) && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum", timeout: timeout)
    }

    static func count(_ root: String) throws -> Int {
        let r = try TimedProcess.sh("find \(shq(root)) | wc -l", timeout: 300)
        return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Allocated bytes and sizes of every regular file under `dir` ("" if the folder does not exist).
    static func regularFiles(under dir: String) throws -> [(path: String, size: Int64, allocated: Int64)] {
        guard FileManager.default.fileExists(atPath: dir) else { return [] }
        let r = try TimedProcess.sh("find \(shq(dir)) -type f -printf '%s\\t%b\\t%P\\0'", timeout: 60)
        guard r.succeeded else { throw ShellError("find in \(dir) failed: \(r)") }
        return r.stdout.split(separator: "\0").compactMap { rec in
            let f = rec.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard f.count == 3 else { return nil }
            return (String(f[2]), Int64(f[0]) ?? -1, (Int64(f[1]) ?? -1) * 512)
        }
    }
}

/// A seeded list of (offset, length) reads inside a file of `size` bytes, with the edges included.
func randomReads(count: Int, size: Int, seed: UInt64) -> [(offset: Int, length: Int)] {
    var rng = SeededRandom(seed: seed)
    var reads: [(Int, Int)] = [(0, 1), (size - 1, 1), (size - 4096, 4096), (0, 131_072 + 17)]
    while reads.count < count {
        let length = Int.random(in: 1...(1 << 20), using: &rng)
        let offset = Int.random(in: 0...(size - length), using: &rng)
        reads.append((offset, length))
    }
    return reads
}

/// The checks both providers share. `server` is the folder the remote serves, `mount` the mount point.
enum SharedChecks {
    /// Same relative paths, kinds, file sizes, file mtimes (to the second), sha256 of every file, count.
    static func treeEquality(mount: String, server: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let started = Date()
        let s = try Tree.listing(server)
        let m = try Tree.listing(mount)
        let listed = Date().timeIntervalSince(started)
        let onlyServer = Set(s.keys).subtracting(m.keys).sorted()
        let onlyMount = Set(m.keys).subtracting(s.keys).sorted()
        XCTAssertEqual(onlyServer, [], "paths on the server missing from the mount (\(onlyServer.count))", file: file, line: line)
        XCTAssertEqual(onlyMount, [], "paths on the mount not on the server (\(onlyMount.count))", file: file, line: line)
        var mismatches: [String] = []
        for (p, se) in s.sorted(by: { $0.key < $1.key }) {
            guard let me = m[p] else { continue }
            if se.kind != me.kind { mismatches.append("\(p): kind server \(se.kind) mount \(me.kind)") }
            if se.kind == "f" && se.size != me.size { mismatches.append("\(p): size server \(se.size) mount \(me.size)") }
            if se.kind == "f" && se.mtime != me.mtime { mismatches.append("\(p): mtime server \(se.mtime) mount \(me.mtime)") }
        }
        XCTAssertEqual(mismatches.count, 0, "entries differ:\n" + mismatches.prefix(40).joined(separator: "\n"), file: file, line: line)

        // The files with a set mtime, checked by name too.
        for (p, mtime) in TreeGenerator.oldFiles {
            XCTAssertEqual(m[p]?.mtime, mtime, "mtime of \(p) on the mount", file: file, line: line)
        }
        for name in TreeGenerator.awkwardNames {
            XCTAssertEqual(m["awkward/files/\(name)"]?.kind, "f", "awkward file \(name.debugDescription)", file: file, line: line)
            XCTAssertEqual(m["awkward/dirs/\(name)"]?.kind, "d", "awkward folder \(name.debugDescription)", file: file, line: line)
        }
        XCTAssertEqual(m[TreeGenerator.emptyFile]?.size, 0, file: file, line: line)

        let sh = try Tree.hashes(server)
        XCTAssertTrue(sh.succeeded, "sha256sum on the server tree: \(sh)", file: file, line: line)
        let hashStart = Date()
        let mh = try Tree.hashes(mount)
        let hashed = Date().timeIntervalSince(hashStart)
        XCTAssertTrue(mh.succeeded, "sha256sum over the mount: \(mh)", file: file, line: line)
        if sh.stdout != mh.stdout {
            let sl = Set(sh.stdout.split(separator: "\n")), ml = Set(mh.stdout.split(separator: "\n"))
            let diff = sl.subtracting(ml).sorted().prefix(20).map { "server: \($0)" }
                + ml.subtracting(sl).sorted().prefix(20).map { "mount:  \($0)" }
            XCTFail("sha256 of files differ (\(sl.subtracting(ml).count) lines):\n" + diff.joined(separator: "\n"), file: file, line: line)
        }
        XCTAssertEqual(try Tree.count(mount), try Tree.count(server), "find | wc -l", file: file, line: line)
        print("treeEquality: \(s.count) entries; listing took \(String(format: "%.1f", listed)) s, sha256 over the mount \(String(format: "%.1f", hashed)) s")
    }

    /// 50 seeded random (offset, length) reads of the big file via dd equal the server's bytes.
    static func randomOffsetReads(mount: String, server: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let reads = randomReads(count: 50, size: TreeGenerator.bigFileSize, seed: 42)
        func script(_ root: String) -> String {
            let f = shq(root + "/" + TreeGenerator.bigFile)
            return reads.map { r in
                "dd if=\(f) iflag=skip_bytes,count_bytes skip=\(r.offset) count=\(r.length) bs=1M status=none | sha256sum | cut -c1-64"
            }.joined(separator: "\n") + "\n"
        }
        let s = try TimedProcess.sh("set -o pipefail\n" + script(server), timeout: 120)
        XCTAssertTrue(s.succeeded, "server reads: \(s)", file: file, line: line)
        let started = Date()
        let m = try TimedProcess.sh("set -o pipefail\n" + script(mount), timeout: 300)
        XCTAssertTrue(m.succeeded, "reads on the mount: \(m)", file: file, line: line)
        let sl = s.stdout.split(separator: "\n"), ml = m.stdout.split(separator: "\n")
        XCTAssertEqual(sl.count, reads.count, file: file, line: line)
        var bad: [String] = []
        for (i, r) in reads.enumerated() where i >= ml.count || ml[i] != sl[i] {
            bad.append("read #\(i) offset \(r.offset) length \(r.length)")
        }
        XCTAssertEqual(bad, [], "reads whose bytes differ from the server's", file: file, line: line)
        print("randomOffsetReads: \(reads.count) reads in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// Reads a few files so content is cached, checks it is under CACHEDIR/content.
    static func readSome(_ mnt: MountedFavFS, file: StaticString = #filePath, line: UInt = #line) throws {
        let p = mnt.path
        let r = try TimedProcess.sh("""
            set -e
            cat \(shq(p))/many/f00001.txt \(shq(p))/many/f00002.txt \(shq(p))/deep/l1/l2/file2.txt > /dev/null
            cat \(shq(p + "/awkward/files/ünïcödé ☃")) > /dev/null
            dd if=\(shq(p))/\(TreeGenerator.bigFile) of=/dev/null bs=1M count=2 status=none
            """, timeout: 120)
        XCTAssertTrue(r.succeeded, "reading on the mount: \(r)", file: file, line: line)
    }

    static func allocatedContent(_ mnt: MountedFavFS) throws -> (total: Int64, files: [(path: String, size: Int64, allocated: Int64)]) {
        let files = try Tree.regularFiles(under: mnt.contentDir.path)
        return (files.reduce(0) { $0 + $1.allocated }, files)
    }

    /// After reading, `favfs unmount` leaves no allocated content under CACHEDIR/content; placeholders stay.
    static func unmountEvicts(_ mnt: MountedFavFS, file: StaticString = #filePath, line: UInt = #line) throws {
        try mnt.mountOrThrow()
        try readSome(mnt, file: file, line: line)
        let before = try allocatedContent(mnt)
        XCTAssertGreaterThan(before.total, 0, "content was read but nothing is allocated under \(mnt.contentDir.path)", file: file, line: line)
        let u = try mnt.unmount()
        XCTAssertTrue(u.succeeded, "favfs unmount: \(u)", file: file, line: line)
        XCTAssertFalse(mnt.isMounted, "still mounted after favfs unmount", file: file, line: line)
        let after = try allocatedContent(mnt)
        let left = after.files.filter { $0.allocated > 0 }
        XCTAssertEqual(left.map { "\($0.path) size \($0.size) allocated \($0.allocated)" }, [],
                       "content left under \(mnt.contentDir.path) after unmount", file: file, line: line)
        XCTAssertTrue(FileManager.default.fileExists(atPath: mnt.placeholderDB.path),
                      "placeholders.sqlite gone after unmount", file: file, line: line)
    }

    /// With `--keep-cache` the content stays.
    static func unmountKeepCacheKeeps(_ mnt: MountedFavFS, file: StaticString = #filePath, line: UInt = #line) throws {
        try mnt.mountOrThrow()
        try readSome(mnt, file: file, line: line)
        let u = try mnt.unmount(keepCache: true)
        XCTAssertTrue(u.succeeded, "favfs unmount --keep-cache: \(u)", file: file, line: line)
        XCTAssertFalse(mnt.isMounted, "still mounted after favfs unmount --keep-cache", file: file, line: line)
        let after = try allocatedContent(mnt)
        XCTAssertGreaterThanOrEqual(after.total, 2 << 20,
                                    "after --keep-cache, at least the 2 MiB read should stay under \(mnt.contentDir.path): \(after.files)",
                                    file: file, line: line)
        XCTAssertTrue(FileManager.default.fileExists(atPath: mnt.placeholderDB.path), file: file, line: line)
    }

    /// Every write operation fails with EROFS and changes nothing at the server.
    static func readOnly(mount p: String, server: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let existing = "many/f00003.txt"
        let before = try Data(contentsOf: URL(fileURLWithPath: server + "/" + existing))
        let ops: [(String, String)] = [
            ("touch new file", "touch \(shq(p + "/new-file"))"),
            ("touch existing file", "touch \(shq(p + "/" + existing))"),
            ("mkdir", "mkdir \(shq(p + "/new-folder"))"),
            ("rm", "rm \(shq(p + "/" + existing))"),
            ("rm -r folder", "rm -r \(shq(p + "/deep/l1/l2/l3/l4/l5/l6/l7"))"),
            ("rmdir", "rmdir \(shq(p + "/awkward/dirs/a b"))"),
            ("mv", "mv \(shq(p + "/" + existing)) \(shq(p + "/moved.txt"))"),
            ("write > existing", "echo hi > \(shq(p + "/" + existing))"),
            ("write >> existing", "echo hi >> \(shq(p + "/" + existing))"),
            ("write > new", "echo hi > \(shq(p + "/new-by-redirect.txt"))"),
            ("cp into mount", "cp /etc/hostname \(shq(p + "/copied"))"),
            ("truncate", "truncate -s 0 \(shq(p + "/" + existing))"),
            ("ln -s", "ln -s x \(shq(p + "/link"))"),
            ("chmod", "chmod 600 \(shq(p + "/" + existing))"),
        ]
        for (what, cmd) in ops {
            let r = try TimedProcess.sh(cmd, timeout: 30)
            XCTAssertNotEqual(r.status, 0, "\(what) succeeded on a read-only mount", file: file, line: line)
            XCTAssertFalse(r.timedOut, "\(what) hung", file: file, line: line)
            XCTAssertTrue(r.stderr.contains("Read-only file system"), "\(what): expected EROFS, got: \(r.stderr)", file: file, line: line)
        }
        let fm = FileManager.default
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: server + "/" + existing)), before, file: file, line: line)
        for gone in ["new-file", "new-folder", "moved.txt", "new-by-redirect.txt", "copied", "link"] {
            XCTAssertFalse(fm.fileExists(atPath: server + "/" + gone), "\(gone) appeared at the server", file: file, line: line)
        }
        XCTAssertTrue(fm.fileExists(atPath: server + "/deep/l1/l2/l3/l4/l5/l6/l7/file7.txt"), file: file, line: line)
        XCTAssertTrue(fm.fileExists(atPath: server + "/awkward/dirs/a b"), file: file, line: line)
    }

    /// With `--cache-size 8M`, reading the whole 64 MiB file gives the right bytes and, once closed,
    /// the content cache is trimmed to at most 8 MiB.
    static func cacheSizeLimit(_ mnt: MountedFavFS, server: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let limit: Int64 = 8 << 20
        try mnt.mountOrThrow(extraArgs: ["--cache-size", "8M"])
        let m = try TimedProcess.sh("sha256sum < \(shq(mnt.path + "/" + TreeGenerator.bigFile))", timeout: 300)
        let s = try TimedProcess.sh("sha256sum < \(shq(server + "/" + TreeGenerator.bigFile))", timeout: 60)
        XCTAssertTrue(m.succeeded, "reading big.bin: \(m)", file: file, line: line)
        XCTAssertEqual(m.stdout, s.stdout, "sha256 of big.bin through a mount with an 8 MiB cache", file: file, line: line)
        // No other reads: closing big.bin alone must bring the cache under the limit (it could
        // not be evicted while open).
        var total = try allocatedContent(mnt).total
        let deadline = Date().addingTimeInterval(15)
        while total > limit && Date() < deadline {
            usleep(250_000)
            total = try allocatedContent(mnt).total
        }
        let files = try allocatedContent(mnt).files
        XCTAssertLessThanOrEqual(total, limit, "content cache holds \(total) bytes 15 s after big.bin was closed, over --cache-size 8M: \(files)",
                                 file: file, line: line)
    }

    /// With `--dir-cache-time 1`, a file added at the remote shows up in a listing, and its removal too.
    static func remoteChangesAppear(_ mnt: MountedFavFS, server: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try mnt.mountOrThrow(extraArgs: ["--dir-cache-time", "1"])
        let name = "fresh-\(UUID().uuidString.prefix(8)).txt"
        let serverFile = URL(fileURLWithPath: server).appendingPathComponent("deep/l1/\(name)")
        defer { try? FileManager.default.removeItem(at: serverFile) }
        let dir = mnt.path + "/deep/l1"
        let first = try TimedProcess.sh("ls \(shq(dir))", timeout: 30)
        XCTAssertTrue(first.succeeded && first.stdout.contains("file1.txt"), "ls: \(first)", file: file, line: line)
        XCTAssertFalse(first.stdout.contains(name), file: file, line: line)

        try Data("new at the remote\n".utf8).write(to: serverFile)
        func waitFor(_ present: Bool) throws -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                let r = try TimedProcess.sh("ls \(shq(dir))", timeout: 30)
                if r.succeeded && r.stdout.split(separator: "\n").contains(Substring(name)) == present { return true }
                usleep(500_000)
            }
            return false
        }
        XCTAssertTrue(try waitFor(true), "a file added at the remote did not show up within 20 s (--dir-cache-time 1)", file: file, line: line)
        let cat = try TimedProcess.sh("cat \(shq(dir + "/" + name))", timeout: 30)
        XCTAssertEqual(cat.stdout, "new at the remote\n", "reading the new file: \(cat)", file: file, line: line)

        try FileManager.default.removeItem(at: serverFile)
        XCTAssertTrue(try waitFor(false), "a file removed at the remote still listed after 20 s", file: file, line: line)
    }

    /// `favfs mount --foreground` stays in the foreground while mounted and exits 0 after `favfs unmount`.
    static func foreground(_ mnt: MountedFavFS, file: StaticString = #filePath, line: UInt = #line) throws {
        let bin = shq(FavFSBinary.path), mp = shq(mnt.path)
        let r = try TimedProcess.sh("""
            \(bin) mount \(mp) --remote \(shq(mnt.remote)) --cache-dir \(shq(mnt.cacheDir.path)) --foreground \
                2> \(shq(mnt.base.appendingPathComponent("foreground.log").path)) &
            pid=$!
            for i in $(seq 300); do mountpoint -q \(mp) && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done
            mountpoint -q \(mp) || { echo "not mounted"; kill $pid; wait $pid; echo "exit=$?"; exit 3; }
            kill -0 $pid && echo "still running while mounted"
            cat \(mp)/deep/file0.txt
            \(bin) unmount \(mp) > /dev/null || echo "unmount failed"
            wait $pid; echo "exit=$?"
            """, timeout: 90)
        let log = (try? String(contentsOf: mnt.base.appendingPathComponent("foreground.log"), encoding: .utf8)) ?? ""
        XCTAssertFalse(r.timedOut, "foreground mount/unmount hung: \(r)\nlog: \(log.suffix(2000))", file: file, line: line)
        XCTAssertEqual(r.stdout, "still running while mounted\nlevel 0\nexit=0\n", "\(r)\nlog: \(log.suffix(2000))", file: file, line: line)
        XCTAssertFalse(mnt.isMounted, file: file, line: line)
    }
}

/// Polls `condition` every 0.2 s for up to `seconds`.
func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        usleep(200_000)
    }
    return condition()
}
