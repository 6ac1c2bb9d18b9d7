import Foundation
import Testing
import TestSupport

/// `df` on a mount: the remote's numbers where it has them (SFTP's statvfs@openssh.com: the
/// served folder's file system), otherwise the cache disk's (S3 has no free space to ask for;
/// a 16 MiB tmpfs as the cache dir shows as 16 MiB).
@Suite(.serialized)
struct DiskFreeEndToEndTests {
    /// Total and available bytes of the file system at `path`, as `stat -f` (statfs) says.
    static func numbers(_ path: String) throws -> (total: Int64, available: Int64) {
        let r = try TimedProcess.run("/usr/bin/stat", ["-f", "-c", "%b %a %S", path], timeout: 60)
        let f = r.stdout.split(separator: " ").compactMap { Int64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard r.succeeded, f.count == 3 else { throw ShellError("stat -f \(path): \(r)") }
        return (f[0] * f[2], f[1] * f[2])
    }

    @Test("SFTP: df shows the server's file system")
    func sftpShowsTheServersNumbers() throws {
        try E2EGate.requireFUSE()
        let s = SFTPConformanceServer.shared
        try s.start()
        let remote = s.remote()
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        try m.mountOrThrow(password: remote.secret)
        let mounted = try Self.numbers(m.path), served = try Self.numbers(try s.servedFolder().path)
        #expect(abs(mounted.total - served.total) <= served.total / 100, "mount \(mounted), served folder \(served)")
        #expect(abs(mounted.available - served.available) <= max(served.total / 100, 64 << 20), "mount \(mounted), served folder \(served)")
        #expect(try m.unmount().succeeded)
    }

    @Test("S3: df shows the cache disk")
    func s3ShowsTheCacheDisk() throws {
        try E2EGate.requireFUSE()
        guard getuid() == 0 else { throw ShellError("mounting a tmpfs needs root") }
        let s = S3ConformanceServer.shared
        try s.start()
        let disk = URL(fileURLWithPath: "/tmp/favfs-df-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        let tmpfs = try TimedProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", disk.path], timeout: 30)
        #expect(tmpfs.succeeded, "\(tmpfs)")
        defer {
            _ = try? TimedProcess.run("/bin/umount", ["-l", disk.path], timeout: 30)
            try? FileManager.default.removeItem(at: disk)
        }
        let remote = s.remote()
        let m = try MountedFavFS(remote: remote.urlWithOptions, cacheDir: disk.appendingPathComponent("cache"))
        defer { m.tearDown() }
        try m.mountOrThrow(password: remote.secret)
        let mounted = try Self.numbers(m.path), cache = try Self.numbers(disk.path)
        #expect(mounted.total == cache.total, "mount \(mounted), cache disk \(cache)")
        #expect(mounted.total == 16 << 20)
        #expect(abs(mounted.available - cache.available) <= 1 << 20, "mount \(mounted), cache disk \(cache)")
        #expect(try m.unmount().succeeded)
    }
}
