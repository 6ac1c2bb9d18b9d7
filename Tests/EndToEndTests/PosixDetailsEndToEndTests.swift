import Foundation
import TestSupport
import XCTest

/// POSIX details programs rely on, through the binary under test on the local provider (which
/// keeps nanoseconds) and on Apache mod_dav (which keeps whole seconds): ENAMETOOLONG, EFBIG,
/// exact timestamps, and a folder's mtime moving when its entries change.
final class PosixDetailsEndToEndTests: XCTestCase {
    var mounts: [MountedFavFS] = []
    var served: URL!

    override func setUpWithError() throws {
        try E2EGate.require(apache: false)
        served = URL(fileURLWithPath: "/tmp/favfs-posix-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        if let served { try? FileManager.default.removeItem(at: served) }
        super.tearDown()
    }

    private func mountLocal() throws -> MountedFavFS {
        let m = try MountedFavFS(remote: "file://" + served.path)
        mounts.append(m)
        try m.mountOrThrow()
        return m
    }

    private func errnoOf(_ body: () -> Int32) -> Int32 {
        errno = 0
        return body() < 0 ? errno : 0
    }

    func testNamesOver255BytesAreENAMETOOLONG() throws {
        let m = try mountLocal()
        let long = m.path + "/" + String(repeating: "x", count: 256)
        XCTAssertEqual(errnoOf { open(long, O_CREAT | O_WRONLY, 0o644) }, ENAMETOOLONG, "create")
        XCTAssertEqual(errnoOf { open(long, O_RDONLY) }, ENAMETOOLONG, "lookup")
        XCTAssertEqual(errnoOf { mkdir(long, 0o755) }, ENAMETOOLONG, "mkdir")
        XCTAssertEqual(errnoOf { unlink(long) }, ENAMETOOLONG, "unlink")
        XCTAssertEqual(errnoOf { symlink("target", long) }, ENAMETOOLONG, "symlink")
        XCTAssertTrue(FileManager.default.createFile(atPath: m.path + "/short", contents: Data("a".utf8)))
        XCTAssertEqual(errnoOf { rename(m.path + "/short", long) }, ENAMETOOLONG, "rename")
        // 255 bytes is a name.
        let fits = m.path + "/" + String(repeating: "y", count: 255)
        XCTAssertTrue(FileManager.default.createFile(atPath: fits, contents: Data("b".utf8)))
        XCTAssertEqual(try m.unmount().status, 0)
        XCTAssertEqual(FileManager.default.contents(atPath: served.path + "/" + String(repeating: "y", count: 255)), Data("b".utf8))
    }

    func testSizesPastWhatTheCacheDiskHoldsAreEFBIG() throws {
        let m = try mountLocal()
        let path = m.path + "/big"
        let fd = open(path, O_CREAT | O_RDWR, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        XCTAssertEqual(errnoOf { ftruncate(fd, off_t(1) << 62) }, EFBIG, "ftruncate to 4 EiB")
        XCTAssertEqual(errnoOf { Glibc.truncate(path, off_t(1) << 62) }, EFBIG, "truncate to 4 EiB")
        let byte: [UInt8] = [1]
        errno = 0
        let n = byte.withUnsafeBytes { pwrite(fd, $0.baseAddress, 1, off_t(1) << 62) }
        XCTAssertEqual(n, -1)
        XCTAssertEqual(errno, EFBIG, "pwrite at 4 EiB")
        XCTAssertTrue(m.isMounted)
        var st = stat()
        XCTAssertEqual(fstat(fd, &st), 0)
        XCTAssertEqual(st.st_size, 0)
    }

    func testTimesKeepTheirNanosecondsOnTheLocalProvider() throws {
        let m = try mountLocal()
        let path = m.path + "/timed"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("t".utf8)))
        let set = timespec(tv_sec: 1_600_000_000, tv_nsec: 987_654_321)
        XCTAssertEqual(utimensat(AT_FDCWD, path, [set, set], 0), 0, String(cString: strerror(errno)))
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0)
        XCTAssertEqual(st.st_mtim.tv_sec, 1_600_000_000)
        XCTAssertEqual(st.st_mtim.tv_nsec, 987_654_321, "the mount")
        XCTAssertEqual(stat(served.path + "/timed", &st), 0)
        XCTAssertEqual(st.st_mtim.tv_nsec, 987_654_321, "the backing file")
        // Kept by the placeholder database across a remount.
        XCTAssertEqual(try m.unmount().status, 0)
        try m.mountOrThrow()
        XCTAssertEqual(stat(path, &st), 0)
        XCTAssertEqual(st.st_mtim.tv_sec, 1_600_000_000)
        XCTAssertEqual(st.st_mtim.tv_nsec, 987_654_321, "after a remount")
    }

    /// As `tar x` does: the time set on a file still open and being written (answered at once,
    /// kept for the upload) is the backing file's once uploaded, and survives a remount.
    func testTimeSetWhileWritingReachesTheRemote() throws {
        let m = try mountLocal()
        let path = m.path + "/extracted.c"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0, String(cString: strerror(errno)))
        XCTAssertEqual(write(fd, "int x;\n", 7), 7)
        let set = timespec(tv_sec: 1_500_000_000, tv_nsec: 123_456_789)
        XCTAssertEqual(futimens(fd, [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2) /* UTIME_OMIT */, set]), 0, String(cString: strerror(errno)))
        XCTAssertEqual(fchmod(fd, 0o644), 0)
        var st = stat()
        XCTAssertEqual(fstat(fd, &st), 0)
        XCTAssertEqual(st.st_mtim.tv_sec, 1_500_000_000, "the mount, while open")
        XCTAssertEqual(close(fd), 0)
        XCTAssertTrue(waitUntil(30) {
            var s = stat()
            return stat(self.served.path + "/extracted.c", &s) == 0 && s.st_mtim.tv_sec == 1_500_000_000 && s.st_size == 7
        }, "the backing file never got the time")
        XCTAssertEqual(stat(served.path + "/extracted.c", &st), 0)
        XCTAssertEqual(st.st_mtim.tv_nsec, 123_456_789)
        XCTAssertEqual(try m.unmount().status, 0)
        try m.mountOrThrow()
        XCTAssertEqual(stat(path, &st), 0)
        XCTAssertEqual(st.st_mtim.tv_sec, 1_500_000_000, "after a remount")
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "int x;\n")
    }

    func testAFoldersMtimeMovesWhenItsEntriesChange() throws {
        let m = try mountLocal()
        let dir = m.path + "/dir"
        XCTAssertEqual(mkdir(dir, 0o755), 0)
        func mtime(_ p: String) -> Timespec {
            var st = stat()
            XCTAssertEqual(stat(p, &st), 0)
            return Timespec(st.st_mtim)
        }
        var last = mtime(dir)
        for (what, change) in [("create", { _ = FileManager.default.createFile(atPath: dir + "/f", contents: Data()) }),
                               ("rename", { _ = rename(dir + "/f", dir + "/g") }),
                               ("mkdir", { _ = mkdir(dir + "/sub", 0o755) }),
                               ("rmdir", { _ = rmdir(dir + "/sub") }),
                               ("unlink", { _ = unlink(dir + "/g") })] as [(String, () -> Void)] {
            usleep(20_000)
            change()
            let now = mtime(dir)
            XCTAssertGreaterThan(now, last, "\(what) in a folder moves its mtime")
            last = now
        }
        var st = stat()
        XCTAssertEqual(stat(m.path, &st), 0)
        let rootBefore = Timespec(st.st_mtim)
        usleep(20_000)
        XCTAssertTrue(FileManager.default.createFile(atPath: m.path + "/top", contents: Data()))
        XCTAssertEqual(stat(m.path, &st), 0)
        XCTAssertGreaterThan(Timespec(st.st_mtim), rootBefore, "the root's mtime")
    }
}

/// A comparable timespec for assertions.
struct Timespec: Comparable, CustomStringConvertible {
    let sec: Int, nsec: Int
    init(_ t: timespec) { sec = t.tv_sec; nsec = t.tv_nsec }
    static func < (a: Timespec, b: Timespec) -> Bool { (a.sec, a.nsec) < (b.sec, b.nsec) }
    var description: String { "\(sec).\(nsec)" }
}

extension PosixDetailsEndToEndTests {
    /// A path that fits under the mount but not in the backing folder (its own path adds to
    /// it): refused at create with ENAMETOOLONG, never acknowledged and then stranded.
    func testAPathTooLongForTheRemoteIsRefusedAtCreate() throws {
        let m = try mountLocal()
        // Folders of 200-byte names until the backing path is near PATH_MAX (4096).
        var dir = m.path, backing = served.path
        let name = String(repeating: "d", count: 200)
        while backing.utf8.count + 201 < 4095 {
            dir += "/" + name
            backing += "/" + name
            XCTAssertEqual(mkdir(dir, 0o755), 0, "mkdir at \(backing.utf8.count) bytes: \(String(cString: strerror(errno)))")
        }
        let file = dir + "/" + String(repeating: "f", count: 200)
        errno = 0
        XCTAssertEqual(open(file, O_CREAT | O_WRONLY, 0o644), -1, "created a file whose backing path is \(backing.utf8.count + 201) bytes")
        XCTAssertEqual(errno, ENAMETOOLONG)
        XCTAssertEqual(mkdir(file, 0o755), -1)
        XCTAssertEqual(errno, ENAMETOOLONG)
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: backing), [])
    }
}
