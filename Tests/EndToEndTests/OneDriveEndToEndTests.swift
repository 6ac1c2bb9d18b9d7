import Foundation
import Testing
import TestSupport

/// A OneDrive mount against the Graph fixture: what is written through the mount is on the
/// server, a name OneDrive refuses is EINVAL at once (never queued for upload), and a change
/// made on the server reaches `ls` through delta with an hour between the mount's own polls.
@Suite(.serialized)
struct OneDriveEndToEndTests {
    @Test("onedrive: writes land, refused names are EINVAL, server changes arrive through delta")
    func writesNamesAndDelta() throws {
        try E2EGate.requireFUSE()
        let s = OneDriveConformanceServer.shared
        let root = "od-\(UUID().uuidString.prefix(6).lowercased())"
        try s.start()
        try s.seed(files: ["\(root)/a.txt": Data("a\n".utf8)], folders: [])
        let remote = s.remote()
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--poll-interval", "3600", "--dir-cache-time", "3600", "--attr-timeout", "60"], password: remote.secret)
        let fm = FileManager.default, dir = m.path + "/" + root

        // Written through the mount, read back, and on the server once synced.
        let data = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try data.write(to: URL(fileURLWithPath: dir + "/mine.bin"))
        #expect(fm.contents(atPath: dir + "/mine.bin") == data)
        #expect(try Shell.run("/bin/sync", ["-f", dir + "/mine.bin"]).status == 0)
        #expect(waitUntil(20) { (try? s.contents(of: "\(root)/mine.bin")) == data }, "mine.bin did not reach the server — \(m.logProblems())")

        // A name OneDrive refuses: EINVAL from open(O_CREAT), and nothing waits to be uploaded.
        let fd = open(dir + "/what?.txt", O_WRONLY | O_CREAT, 0o644)
        let err = errno
        if fd >= 0 { close(fd) }
        #expect(fd < 0 && err == EINVAL, "creating what?.txt: fd \(fd), errno \(err)")
        #expect(mkdir(dir + "/CON", 0o755) != 0 && errno == EINVAL, "mkdir CON")
        #expect(try !s.exists("\(root)/what?.txt"))

        // Another client adds a file and deletes one: seen without the mount's poller.
        #expect(try fm.contentsOfDirectory(atPath: dir).sorted() == ["a.txt", "mine.bin"])
        try s.seed(files: ["\(root)/theirs.txt": Data("theirs\n".utf8)], folders: [])
        try s.remove("\(root)/a.txt")
        #expect(waitUntil(20) { (try? fm.contentsOfDirectory(atPath: dir))?.sorted() == ["mine.bin", "theirs.txt"] },
                "not seen within 20 s: \((try? fm.contentsOfDirectory(atPath: dir)) ?? []) — \(m.logProblems())")
        #expect(fm.contents(atPath: dir + "/theirs.txt") == Data("theirs\n".utf8))
        let unmounted = try m.unmount()
        #expect(unmounted.succeeded, "favfs unmount: \(unmounted) — \(m.logProblems())")
    }

    @Test("onedrive: a refresh token Microsoft refuses fails the mount, naming the command that signs in again")
    func refusedRefreshToken() throws {
        try E2EGate.requireFUSE()
        let s = OneDriveConformanceServer.shared
        try s.start()
        let remote = try #require(s.remoteWithWrongCredentials())
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        let r = try m.mount(password: remote.secret, timeout: 60)
        #expect(!r.succeeded, "mounted with a refused refresh token: \(r)")
        let said = r.stderr + r.stdout
        #expect(said.contains("invalid_grant") && said.contains("sign in again (favfs remote add NAME URL --option client_id=ID --force"), "\(r)")
    }
}
