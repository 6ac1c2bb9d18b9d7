import Foundation
import TestSupport
import XCTest

/// The conventions a Debian program keeps, on the release binary: sysexits statuses, the
/// mount.fuse3 calling form (`favfs SOURCE MOUNTPOINT -o …`), mount options for other users,
/// the sd_notify protocol, `--json` for scripts and a `--version` that says what it runs on.
final class CommandLineEndToEndTests: XCTestCase {
    private var mounts: [MountedFavFS] = []
    private var temps: [URL] = []

    override func tearDown() {
        mounts.forEach { $0.tearDown() }
        temps.forEach { try? FileManager.default.removeItem(at: $0) }
        super.tearDown()
    }

    private func folder() throws -> URL {
        let d = URL(fileURLWithPath: "/tmp").appendingPathComponent("favfs-e2e-cli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: d.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try Data("hello\n".utf8).write(to: d.appendingPathComponent("hello.txt"))
        temps.append(d)
        return d
    }

    /// Runs `favfs mount` for `m` as the plain user nobody: a copy of the binary nobody can run,
    /// the served folder (a file:// remote) readable, the mount point and cache dir nobody's.
    private func mountAsNobody(_ m: MountedFavFS, environment: [String] = []) throws -> TimedProcess.Result {
        let binary = m.base.appendingPathComponent("favfs")
        try Data(contentsOf: URL(fileURLWithPath: FavFSBinary.path)).write(to: binary)
        chmod(binary.path, 0o755)
        chmod(String(m.remote.dropFirst("file://".count)), 0o755)
        chmod(m.base.path, 0o755)
        for dir in [m.mountPoint, m.cacheDir] { chown(dir.path, 65534, 65534) }
        return try TimedProcess.run("/usr/sbin/runuser", ["-u", "nobody", "--", "/usr/bin/env"] + environment +
                                    [binary.path, "mount", m.path, "--remote", m.remote, "--cache-dir", m.cacheDir.path], timeout: 90)
    }

    private func make(_ remote: String) throws -> MountedFavFS {
        let m = try MountedFavFS(remote: remote)
        mounts.append(m)
        return m
    }

    func testNoArgumentsPrintsUsageAndExits64() throws {
        let r = try TimedProcess.run(FavFSBinary.path, [], timeout: 30)
        XCTAssertEqual(r.status, 64, "\(r)")
        XCTAssertTrue(r.stderr.contains("USAGE"), "usage on stderr: \(r)")
    }

    func testVersionNamesTheLibrariesAndProtocols() throws {
        let r = try TimedProcess.run(FavFSBinary.path, ["--version"], timeout: 30)
        XCTAssertTrue(r.succeeded, "\(r)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.hasPrefix("favfs ") == true, r.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("libfuse 3.") }, r.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("libcurl ") }, r.stdout)
        let protocols = lines.first { $0.hasPrefix("protocols: ") }?.split(separator: " ").map(String.init) ?? []
        for p in ["http", "https", "ftp", "ftps", "sftp"] { XCTAssertTrue(protocols.contains(p), "\(p) missing: \(r.stdout)") }
    }

    func testExitStatusesFollowSysexits() throws {
        let unreachable = try TimedProcess.run(FavFSBinary.path, ["remote", "test", "dav://127.0.0.1:\(try FreePort.next())/"], timeout: 60)
        XCTAssertEqual(unreachable.status, 69, "\(unreachable)")
        let missing = try TimedProcess.run(FavFSBinary.path, ["remote", "test", "file:///nonexistent-\(UUID().uuidString)"], timeout: 60)
        XCTAssertEqual(missing.status, 65, "\(missing)")
        let badOption = try TimedProcess.run(FavFSBinary.path, ["mount", "/tmp", "--umask", "999"], timeout: 60)
        XCTAssertEqual(badOption.status, 64, "\(badOption)")
        XCTAssertTrue(badOption.stderr.contains("--umask"), "\(badOption)")
    }

    /// What `mount -t fuse.favfs SOURCE DIR -o …` and an fstab line run (through mount.fuse3):
    /// the generic options are ignored, favfs's own are applied.
    func testTheMountHelperFormMountsWithOwnerAndModeOptions() throws {
        let src = try folder()
        let m = try make("file://" + src.path)
        let options = "rw,nosuid,nodev,noauto,user,_netdev,x-systemd.automount,cache_dir=\(m.cacheDir.path),uid=65534,gid=65534,umask=027,fsync=remote,ro"
        let r = try TimedProcess.run(FavFSBinary.path, ["file://" + src.path, m.path, "-o", options], timeout: 90)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(m.isMounted, "\(r)")
        let daemons = MountedFavFS.processes(mentioning: m.path).map { pid in
            String(decoding: FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data(), as: UTF8.self)
                .split(separator: "\0").map(String.init)
        }
        XCTAssertTrue(daemons.contains { $0.joined(separator: " ").contains("--fsync remote") }, "fsync=remote was not passed on: \(daemons)")
        let a = try FileManager.default.attributesOfItem(atPath: m.path + "/hello.txt")
        XCTAssertEqual((a[.posixPermissions] as? NSNumber)?.intValue, 0o640, "\(a)")
        XCTAssertEqual((a[.ownerAccountID] as? NSNumber)?.intValue, 65534)
        XCTAssertEqual((a[.groupOwnerAccountID] as? NSNumber)?.intValue, 65534)
        let d = try FileManager.default.attributesOfItem(atPath: m.path + "/sub")
        XCTAssertEqual((d[.posixPermissions] as? NSNumber)?.intValue, 0o750, "\(d)")
        XCTAssertEqual(try String(contentsOfFile: m.path + "/hello.txt", encoding: .utf8), "hello\n")
        XCTAssertFalse(FileManager.default.createFile(atPath: m.path + "/new.txt", contents: Data()), "ro was not applied")

        let typo = try TimedProcess.run(FavFSBinary.path, ["moutn", m.path], timeout: 30)
        XCTAssertEqual(typo.status, 64, "\(typo)")
        XCTAssertTrue(typo.stderr.contains("moutn"), "a mistyped command is named: \(typo)")
        let unknown = try TimedProcess.run(FavFSBinary.path, ["file://" + src.path, m.path, "-o", "bogus_flag"], timeout: 60)
        XCTAssertEqual(unknown.status, 64, "\(unknown)")
        XCTAssertTrue(unknown.stderr.contains("bogus_flag"), "\(unknown)")
        XCTAssertTrue(try m.unmount().succeeded)
    }

    /// noexec, nosuid and nodev reach the kernel as mount(8) defines them; `user` (an fstab line
    /// a plain user mounts) implies all three unless a later option says otherwise.
    func testKernelMountFlagsAreHonoured() throws {
        let src = try folder()
        try Data("#!/bin/sh\necho ran\n".utf8).write(to: src.appendingPathComponent("run.sh"))
        chmod(src.appendingPathComponent("run.sh").path, 0o755)
        for (options, expected, runs) in [("noexec,nosuid,nodev", ["noexec", "nosuid", "nodev"], false),
                                         ("user", ["noexec", "nosuid", "nodev"], false),
                                         ("user,exec", ["nosuid", "nodev"], true),
                                         ("rw", [], true)] {
            let m = try make("file://" + src.path)
            let r = try TimedProcess.run(FavFSBinary.path, ["file://" + src.path, m.path, "-o", options + ",cache_dir=" + m.cacheDir.path], timeout: 90)
            XCTAssertTrue(r.succeeded && m.isMounted, "-o \(options): \(r)")
            XCTAssertEqual(r.stdout, "", "a mount helper is silent when it succeeds")
            let flags = Set(MountTable.mountOptions(at: m.path))
            for flag in expected { XCTAssertTrue(flags.contains(flag), "-o \(options): \(flag) missing from \(flags)") }
            if !expected.contains("noexec") { XCTAssertFalse(flags.contains("noexec"), "-o \(options): \(flags)") }
            let run = try TimedProcess.sh(shq(m.path + "/run.sh"), timeout: 30)
            XCTAssertEqual(run.succeeded, runs, "-o \(options): executing a program in the mount: \(run)")
            XCTAssertTrue(try m.unmount().succeeded)
        }
    }

    /// A plain user who cannot open /dev/fuse (0600 here; 0666 on a stock Debian) is told so,
    /// with the mode and what to do, not a guess.
    func testAPlainUserWithoutDevFuseIsToldWhy() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") else { throw XCTSkip("needs root and runuser") }
        var st = stat()
        guard stat("/dev/fuse", &st) == 0 else { throw XCTSkip("no /dev/fuse") }
        let original = st.st_mode & 0o7777
        chmod("/dev/fuse", 0o600)
        defer { chmod("/dev/fuse", original) }
        let m = try make("file://" + (try folder()).path)
        let r = try mountAsNobody(m)
        XCTAssertFalse(r.succeeded, "\(r)")
        XCTAssertTrue(r.stderr.contains("cannot open /dev/fuse: Permission denied") && r.stderr.contains("0600"), "\(r)")
    }

    /// Completion offers folders for mount points and --cache-dir, the log levels, and remote
    /// names (asked of favfs itself) — not just subcommands and option names.
    func testCompletionOffersFoldersLevelsAndRemotes() throws {
        for shell in ["bash", "zsh", "fish"] {
            let r = try TimedProcess.run(FavFSBinary.path, ["--generate-completion-script", shell], timeout: 30)
            XCTAssertTrue(r.succeeded, "\(r)")
            XCTAssertTrue(r.stdout.contains("trace") && r.stdout.contains("warning"), "\(shell): no log levels")
            XCTAssertTrue(r.stdout.contains("---completion"), "\(shell): no call back for remote names")
            let folders = ["bash": "-d", "zsh": "_files -/", "fish": "complete_directories"][shell]!
            XCTAssertTrue(r.stdout.contains(folders), "\(shell): no folder completion (\(folders))")
        }
    }

    /// As root, `allow_other` lets another user in, and the kernel checks the modes.
    func testAllowOtherLetsAnotherUserReadWhatTheModesAllow() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to switch to another user") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") else { throw XCTSkip("no runuser") }
        let src = try folder()
        chmod(src.path, 0o755)
        let m = try make("file://" + src.path)
        chmod(m.base.path, 0o755)
        chmod(m.mountPoint.path, 0o755)
        try m.mountOrThrow(extraArgs: ["--allow-other"])
        let read = try TimedProcess.run("/usr/sbin/runuser", ["-u", "nobody", "--", "cat", m.path + "/hello.txt"], timeout: 30)
        XCTAssertTrue(read.succeeded, "another user could not read through --allow-other: \(read)")
        XCTAssertEqual(read.stdout, "hello\n")
        let write = try TimedProcess.run("/usr/sbin/runuser", ["-u", "nobody", "--", "touch", m.path + "/theirs.txt"], timeout: 30)
        XCTAssertFalse(write.succeeded, "the kernel should refuse a write into a 0755 folder owned by root: \(write)")
        XCTAssertTrue(try m.unmount().succeeded)

        let other = try make("file://" + src.path)
        chmod(other.base.path, 0o755)
        try other.mountOrThrow()
        let refused = try TimedProcess.run("/usr/sbin/runuser", ["-u", "nobody", "--", "cat", other.path + "/hello.txt"], timeout: 30)
        XCTAssertFalse(refused.succeeded, "without --allow-other another user got in: \(refused)")
        XCTAssertTrue(try other.unmount().succeeded)
    }

    /// `favfs status` and `unmount` find the daemon whatever `XDG_RUNTIME_DIR` either side has
    /// (sudo, su, another session): the control socket's folder depends on the uid alone, and
    /// root finds a user's daemon from the mount's owner in mountinfo.
    func testStatusAndUnmountFindTheDaemonFromAnySession() throws {
        let src = try folder()
        let m = try make("file://" + src.path)
        let xdg = m.base.appendingPathComponent("xdg-a")
        try FileManager.default.createDirectory(at: xdg, withIntermediateDirectories: true)
        chmod(xdg.path, 0o700)
        let mount = try TimedProcess.run("/usr/bin/env", ["XDG_RUNTIME_DIR=\(xdg.path)", FavFSBinary.path, "mount", m.path,
                                                          "--remote", m.remote, "--cache-dir", m.cacheDir.path], timeout: 90)
        XCTAssertTrue(mount.succeeded && m.isMounted, "\(mount)")
        for env in [["-u", "XDG_RUNTIME_DIR"], ["XDG_RUNTIME_DIR=/nonexistent-\(UUID().uuidString.prefix(6))"]] {
            let status = try TimedProcess.run("/usr/bin/env", env + [FavFSBinary.path, "status", m.path], timeout: 30)
            XCTAssertTrue(status.succeeded && !status.stdout.contains("not answering") && status.stdout.hasPrefix("folder"),
                          "status with \(env) did not reach the daemon: \(status)")
        }
        let unmount = try TimedProcess.run("/usr/bin/env", ["-u", "XDG_RUNTIME_DIR", FavFSBinary.path, "unmount", m.path], timeout: 90)
        XCTAssertTrue(unmount.succeeded && unmount.stdout.contains("evicted"), "unmount did not reach the daemon: \(unmount)")
        XCTAssertFalse(m.isMounted)

        // A plain user's mount, asked about by root (as after sudo).
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") else { return }
        let fuse = try PlainUserFUSE()
        defer { fuse.restore() }
        let user = try make("file://" + src.path)
        let userMount = try mountAsNobody(user, environment: ["XDG_RUNTIME_DIR=/nonexistent"])
        XCTAssertTrue(userMount.succeeded && user.isMounted, "plain user's mount: \(userMount)")
        let status = try TimedProcess.run(FavFSBinary.path, ["status", user.path], timeout: 30)
        XCTAssertTrue(!status.stdout.contains("not answering") && status.stdout.hasPrefix("folder"), "root's status of nobody's mount: \(status)")
        let rootUnmount = try TimedProcess.run(FavFSBinary.path, ["unmount", user.path], timeout: 90)
        XCTAssertTrue(rootUnmount.succeeded && rootUnmount.stdout.contains("evicted"), "root's unmount of nobody's mount: \(rootUnmount)")
        XCTAssertFalse(user.isMounted)
    }

    /// `Type=notify`: READY=1 once the mount answers (not before), STATUS= lines, STOPPING=1.
    func testForegroundMountSpeaksTheSystemdNotifyProtocol() throws {
        let src = try folder()
        let m = try make("file://" + src.path)
        let socketPath = m.base.appendingPathComponent("notify.sock").path
        let listener = try DatagramListener(path: socketPath)
        defer { listener.close() }

        let p = Process()
        p.executableURL = URL(fileURLWithPath: FavFSBinary.path)
        p.arguments = ["mount", m.path, "--remote", "file://" + src.path, "--cache-dir", m.cacheDir.path, "--foreground"]
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = socketPath
        p.environment = env
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }

        var messages: [String] = []
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !messages.contains(where: { $0.contains("READY=1") }) {
            if let m = listener.receive(timeout: 1) { messages.append(m) }
        }
        let ready = messages.first { $0.contains("READY=1") }
        XCTAssertNotNil(ready, "no READY=1 within 60 s: \(messages)")
        XCTAssertTrue(m.isMounted, "READY=1 came before the mount was in the mount table")
        XCTAssertTrue(ready?.contains("STATUS=mounted") == true, "\(messages)")
        XCTAssertEqual(try String(contentsOfFile: m.path + "/hello.txt", encoding: .utf8), "hello\n")

        XCTAssertTrue(try m.unmount().succeeded)
        while Date() < deadline, !messages.contains(where: { $0.contains("STOPPING=1") }) {
            if let m = listener.receive(timeout: 1) { messages.append(m) }
        }
        XCTAssertTrue(messages.contains { $0.contains("STOPPING=1") }, "no STOPPING=1: \(messages)")
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
    }

    /// A mount while the server is down comes up from the last session's placeholders, and
    /// says so on the terminal rather than only in the log.
    func testMountingWhileTheServerIsDownSaysItIsOffline() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        try apache.start()
        defer { apache.remove() }
        try Data("hello\n".utf8).write(to: apache.documentRoot.appendingPathComponent("hello.txt"))
        try apache.fixOwnership()
        let m = try make(apache.davURL)
        try m.mountOrThrow()
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: m.path).contains("hello.txt"))
        XCTAssertTrue(try m.unmount().succeeded)
        apache.stop()

        let r = try m.mount(timeout: 90)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(r.stderr.contains("offline"), "the terminal is not told the mount is offline: \(r)")
        XCTAssertTrue(r.stderr.contains("placeholders"), "\(r)")
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: m.path).contains("hello.txt"))
        XCTAssertTrue(try m.unmount().succeeded)
    }

    /// Started by systemd with stderr on the journal (`$JOURNAL_STREAM` names it), each log line
    /// carries its syslog priority; anywhere else, none does.
    func testLogLinesCarryPrioritiesForTheJournal() throws {
        let src = try folder()
        for journal in [true, false] {
            let m = try make("file://" + src.path)
            let logPath = m.base.appendingPathComponent("stderr.log").path
            XCTAssertTrue(FileManager.default.createFile(atPath: logPath, contents: nil), "cannot create \(logPath)")
            let handle = try XCTUnwrap(FileHandle(forWritingAtPath: logPath))
            var st = stat()
            XCTAssertEqual(stat(logPath, &st), 0)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: FavFSBinary.path)
            p.arguments = ["mount", m.path, "--remote", "file://" + src.path, "--cache-dir", m.cacheDir.path, "--foreground"]
            var env = ProcessInfo.processInfo.environment
            env["JOURNAL_STREAM"] = journal ? "\(st.st_dev):\(st.st_ino)" : nil
            p.environment = env
            p.standardError = handle
            try p.run()
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline && !m.isMounted { usleep(50_000) }
            XCTAssertTrue(try m.unmount().succeeded)
            p.waitUntilExit()
            try handle.close()
            let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
            XCTAssertFalse(lines.isEmpty)
            if journal {
                XCTAssertTrue(lines.allSatisfy { $0.range(of: "^<[0-7]>", options: .regularExpression) != nil }, "\(lines)")
                XCTAssertTrue(lines.contains { $0.hasPrefix("<6>") && $0.contains("mounted") }, "\(lines)")
            } else {
                XCTAssertFalse(lines.contains { $0.hasPrefix("<") }, "\(lines)")
            }
        }
    }

    /// A program that runs `favfs mount` with a file of another mount open (a shell in a script)
    /// must not lend that descriptor to the long-lived daemon: the other mount would stay busy.
    func testTheDaemonInheritsNoDescriptorOfItsCaller() throws {
        let src = try folder()
        let x = try make("file://" + src.path), y = try make("file://" + src.path)
        try x.mountOrThrow()
        let r = try TimedProcess.sh("exec 7< \(shq(x.path + "/hello.txt")); \(shq(FavFSBinary.path)) mount \(shq(y.path)) --remote \(shq("file://" + src.path)) --cache-dir \(shq(y.cacheDir.path))", timeout: 60)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(y.isMounted)
        let u = try x.unmount()
        XCTAssertTrue(u.succeeded, "the other mount's daemon keeps \(x.path) busy: \(u)")
        XCTAssertTrue(try y.unmount().succeeded)
    }

    func testJSONOutputsParse() throws {
        let src = try folder()
        let m = try make("file://" + src.path)
        try m.mountOrThrow()
        _ = try String(contentsOfFile: m.path + "/hello.txt", encoding: .utf8)

        let status = try TimedProcess.run(FavFSBinary.path, ["status", "--json"], timeout: 30)
        XCTAssertTrue(status.succeeded, "\(status)")
        let doc = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let ours = (doc?["mounts"] as? [[String: Any]])?.first { $0["mountpoint"] as? String == m.path }
        XCTAssertNotNil(ours, status.stdout)
        XCTAssertEqual(ours?["answering"] as? Bool, true)
        XCTAssertEqual(ours?["remote"] as? String, "file://" + src.path)
        XCTAssertEqual((ours?["uploads"] as? [String: Any])?["pending"] as? Int, 0)
        XCTAssertEqual((ours?["cache"] as? [String: Any])?["directory"] as? String, m.cacheDir.path)
        XCTAssertNotNil((ours?["lost_and_found"] as? [String: Any])?["files"] as? Int)

        let outside = try TimedProcess.run(FavFSBinary.path, ["status", "/etc"], timeout: 30)
        XCTAssertEqual(outside.status, 64, "\(outside)")
        XCTAssertTrue(outside.stderr.contains("/etc is not inside a favfs mount"), "\(outside)")

        let item = try TimedProcess.run(FavFSBinary.path, ["status", "--json", m.path + "/hello.txt"], timeout: 30)
        let items = (try JSONSerialization.jsonObject(with: Data(item.stdout.utf8)) as? [String: Any])?["items"] as? [[String: Any]]
        XCTAssertEqual(items?.first?["state"] as? String, "materialized", item.stdout)

        let test = try TimedProcess.run(FavFSBinary.path, ["remote", "test", "file://" + src.path, "--json"], timeout: 30)
        let report = try JSONSerialization.jsonObject(with: Data(test.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(report?["ok"] as? Bool, true, test.stdout)
        XCTAssertEqual(report?["items"] as? Int, 2, test.stdout)
        XCTAssertEqual(report?["read_only"] as? Bool, false, test.stdout)
        XCTAssertTrue(try m.unmount().succeeded)
    }
}

/// A Unix datagram socket standing in for systemd's notify socket.
private final class DatagramListener {
    private let fd: Int32
    private let path: String

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var sa = sockaddr_un()
        sa.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &sa.sun_path) { $0.copyBytes(from: bytes) }
        let ok = withUnsafePointer(to: &sa) { sp in
            sp.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, ok == 0 else { throw ShellError("cannot bind \(path): \(String(cString: strerror(errno)))") }
    }

    func receive(timeout: Double) -> String? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? String(decoding: buf[..<n], as: UTF8.self) : nil
    }

    func close() { Glibc.close(fd); unlink(path) }
}
