import Foundation
import TestSupport
import XCTest

/// `cp` inside a mount copies at the server (WebDAV COPY, S3 CopyObject, a local folder's
/// copy_file_range): the source's bytes never come to this machine, the copy is byte-exact at
/// the server, and its close uploads nothing over it. What is not a whole-file copy of a clean
/// file (a file still being written, a partial copy_file_range) is copied through the machine
/// by the kernel, and comes out right too.
final class ServerSideCopyEndToEndTests: XCTestCase {
    static let size = 64 << 20

    /// The server side of one remote, for the checks.
    struct Server {
        /// The bytes the server holds at `name` (a file in the remote's root).
        let contents: (String) throws -> Data?
        /// The server's request log so far.
        let log: () -> String
        /// Whether the log shows the source's bytes being sent (a GET of it).
        let sentSource: (String) -> Bool
        /// Whether the log shows a server-side copy to `name`, the `count`th copy of the test.
        let copiedTo: (String, Int) -> Bool
    }

    func testWebDAVCopyIsACOPY() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        let source = Self.randomData(Self.size)
        try source.write(to: apache.documentRoot.appendingPathComponent("src.bin"))
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow()
        // The access log has method, path and status: a GET of the source would be its bytes
        // sent; each copy is one "COPY /files/src.bin 201" (the log does not show Destination).
        let lines = { apache.accessLogLines() }
        try check(m, source: source, server: Server(
            contents: { try? Data(contentsOf: apache.documentRoot.appendingPathComponent($0)) },
            log: { lines().joined(separator: "\n") },
            sentSource: { name in lines().contains { $0.hasPrefix("GET /files/\(name) ") } },
            copiedTo: { _, count in
                apache.accessLogLines { $0.filter { $0.hasPrefix("COPY /files/src.bin 201") }.count >= count }
                    .filter { $0.hasPrefix("COPY /files/src.bin 201") }.count == count }))
    }

    /// A file another client created at the server under the destination's name (after this
    /// mount listed the folder) is never replaced: COPY goes with `Overwrite: F`, the server
    /// answers 412, the kernel copies through this machine, and the upload of that meets the
    /// other file too (`If-None-Match: *`): ours is saved beside it as a conflict copy.
    func testWebDAVCopyNeverReplacesAFileTheServerGotMeanwhile() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        let source = Self.randomData(1 << 20)
        try source.write(to: apache.documentRoot.appendingPathComponent("src.bin"))
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--poll-interval", "0"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m.path), ["src.bin"])
        let theirs = Data("another client's file\n".utf8)
        try theirs.write(to: apache.documentRoot.appendingPathComponent("taken.bin"))
        try apache.fixOwnership()
        let cp = try TimedProcess.sh("cp \(shq(m.path))/src.bin \(shq(m.path))/taken.bin", timeout: 120)
        XCTAssertTrue(cp.succeeded, "\(cp)")
        let refused = apache.accessLogLines { $0.contains { $0.hasPrefix("COPY /files/src.bin 412") } }
        XCTAssertTrue(refused.contains { $0.hasPrefix("COPY /files/src.bin 412") }, "\(refused)")
        XCTAssertTrue(try m.unmount(timeout: 120).succeeded)
        XCTAssertEqual(try Data(contentsOf: apache.documentRoot.appendingPathComponent("taken.bin")), theirs, "the other client's file")
        let names = try FileManager.default.contentsOfDirectory(atPath: apache.documentRoot.path)
        let conflict = names.filter { $0.hasPrefix("taken (conflict ") && $0.hasSuffix(").bin") }
        XCTAssertEqual(conflict.count, 1, "\(names)")
        XCTAssertEqual(conflict.first.flatMap { try? Data(contentsOf: apache.documentRoot.appendingPathComponent($0)) }, source)
    }

    func testS3CopyIsCopyObject() throws {
        try E2EGate.require(apache: false)
        let moto = try ServerRequirement.moto(bucket: "favfs-copy")
        try moto.start()
        defer { moto.stop() }
        let source = Self.randomData(Self.size)
        try moto.put("src.bin", source)
        let remote = ConformanceRemote(url: "s3://favfs-copy/",
                                       options: ["endpoint": moto.endpoint, "access_key_id": moto.accessKeyId, "region": moto.region],
                                       secret: moto.secretAccessKey)
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--dir-cache-time", "1"], password: remote.secret)
        // moto logs each request line (werkzeug): a GetObject of the source would be a GET of
        // its key; CopyObject is a PUT of the destination key (with x-amz-copy-source).
        let lines = { moto.log().split(separator: "\n").map(String.init) }
        try check(m, source: source, server: Server(
            contents: { try moto.get($0) },
            log: { lines().joined(separator: "\n") },
            sentSource: { name in lines().contains { $0.contains("\"GET /favfs-copy/\(name) ") } },
            copiedTo: { name, _ in lines().contains { $0.contains("\"PUT /favfs-copy/\(name) ") } }))
    }

    func testSMBCopyIsCopyChunk() throws {
        try E2EGate.require(apache: false)
        guard SambaServer.isAvailable else {
            if TestEnvironment.isCI { return XCTFail("Samba is not installed (apt-get install samba) and CI=true") }
            throw XCTSkip("Samba is not installed")
        }
        let samba = try SambaServer()
        try samba.start()
        defer { samba.remove() }
        let source = Self.randomData(Self.size)
        try source.write(to: samba.share.appendingPathComponent("src.bin"))
        let m = try MountedFavFS(remote: "smb://\(samba.user)@127.0.0.1:\(samba.port)/files")
        defer { m.tearDown() }
        try m.mountOrThrow(password: samba.password)
        // SMB has no request log to read: the bytes the mount's connections to smbd received
        // (tcp_info of each, by `ss`) show whether the source came through; the daemon's log
        // says what it copied.
        let daemonLog = { (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? "" }
        let received = { () -> Int64 in
            let ss = try? TimedProcess.sh("ss -tinH state established '( dport = :\(samba.port) )'", timeout: 30)
            return (ss?.stdout ?? "").components(separatedBy: CharacterSet.whitespacesAndNewlines)
                .compactMap { $0.hasPrefix("bytes_received:") ? Int64($0.dropFirst("bytes_received:".count)) : nil }.reduce(0, +)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m.path), ["src.bin"])
        XCTAssertGreaterThan(received(), 0, "ss shows no connection of the mount to smbd: the check below would prove nothing")
        try check(m, source: source, server: Server(
            contents: { try? Data(contentsOf: samba.share.appendingPathComponent($0)) },
            log: { daemonLog() + "\nbytes received from smbd: \(received())" },
            sentSource: { _ in received() > Int64(Self.size / 2) },
            copiedTo: { name, _ in daemonLog().contains("copied /src.bin to /\(name) at smb://") }))
    }

    func testLocalCopyIsLocal() throws {
        try E2EGate.require(apache: false)
        let dir = URL(fileURLWithPath: "/tmp").appendingPathComponent("favfs-copy-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = Self.randomData(Self.size)
        try source.write(to: dir.appendingPathComponent("src.bin"))
        let m = try MountedFavFS(remote: "file://" + dir.path)
        defer { m.tearDown() }
        try m.mountOrThrow()
        // A folder has no request log: the daemon's own says what it did, and the cache (below)
        // shows that no byte of the source came through.
        let daemonLog = { (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? "" }
        try check(m, source: source, server: Server(
            contents: { try? Data(contentsOf: dir.appendingPathComponent($0)) },
            log: daemonLog,
            sentSource: { _ in false },
            copiedTo: { name, _ in daemonLog().contains("copied /src.bin to /\(name) at file://") }))
    }

    /// The checks, the same on every remote.
    private func check(_ m: MountedFavFS, source: Data, server: Server, file: StaticString = #filePath, line: UInt = #line) throws {
        let p = m.path
        // 1. cp and cp --reflink=auto of a file on the server: copied there, nothing downloaded.
        var timings: [String] = []
        let copies = [("copy.bin", ""), ("reflink.bin", "--reflink=auto"), ("preserved.bin", "-p")]
        for (i, (name, flags)) in copies.enumerated() {
            let cp = try TimedProcess.sh("cp \(flags) \(shq(p))/src.bin \(shq(p))/\(name)", timeout: 300)
            timings.append(String(format: "cp %@ %.2f s", flags, cp.elapsed))
            XCTAssertTrue(cp.succeeded, "cp \(flags): \(cp)", file: file, line: line)
            XCTAssertTrue(server.copiedTo(name, i + 1), "no server-side copy to \(name) in the server's log:\n\(server.log().suffix(3000))", file: file, line: line)
            XCTAssertEqual(try server.contents(name), source, "the server's \(name) differs from the source", file: file, line: line)
        }
        // Into another folder, under a name that must be encoded in a URL.
        let odd = "sub dir/ü + x%20.bin"
        let cpOdd = try TimedProcess.sh("mkdir \(shq(p))/'sub dir' && cp \(shq(p))/src.bin \(shq(p + "/" + odd))", timeout: 300)
        XCTAssertTrue(cpOdd.succeeded, "cp into a subfolder: \(cpOdd)", file: file, line: line)
        XCTAssertEqual(try server.contents(odd), source, "the copy to \(odd)", file: file, line: line)
        XCTAssertFalse(server.sentSource("src.bin"), "the server sent the source's bytes:\n\(server.log().suffix(3000))", file: file, line: line)
        let cached = try SharedChecks.allocatedContent(m).total
        XCTAssertLessThan(cached, 1 << 20, "\(cached) bytes of content came to the cache for a server-side copy", file: file, line: line)
        let stat = try TimedProcess.sh("stat -c %s \(shq(p))/copy.bin", timeout: 30)
        XCTAssertEqual(stat.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "\(source.count)", "\(stat)", file: file, line: line)
        // Read back through the mount (fetched on demand, like any placeholder).
        XCTAssertEqual(FileManager.default.contents(atPath: p + "/copy.bin"), source, "the copy read through the mount", file: file, line: line)

        // cp -p sets the time through the new file's descriptor after the copy: the copy stays.
        let times = try TimedProcess.sh("stat -c %Y \(shq(p))/src.bin \(shq(p))/preserved.bin", timeout: 30)
        let t = times.stdout.split(separator: "\n")
        XCTAssertTrue(times.succeeded && t.count == 2 && t[0] == t[1], "cp -p: the times \(times)", file: file, line: line)
        // Also after the folder is listed again (S3 keeps no time it is given: favfs keeps it
        // while the object stays the same; the S3 mount lists again after 1 s).
        usleep(1_500_000)
        _ = try TimedProcess.sh("ls -l \(shq(p)) >/dev/null", timeout: 60)
        let relisted = try TimedProcess.sh("stat -c %Y \(shq(p))/src.bin \(shq(p))/preserved.bin", timeout: 30)
        let r = relisted.stdout.split(separator: "\n")
        XCTAssertTrue(relisted.succeeded && r.count == 2 && r[0] == r[1], "cp -p: the times after a listing \(relisted)", file: file, line: line)

        // More after a copy into the same file (`cat a b > c`): through write() (b on another
        // file system) and through copy_file_range (b in the mount, clean). The copy's content
        // is fetched first, then the file is uploaded whole as any change.
        let small = Data("a small clean file\n".utf8)
        let seed = try TimedProcess.sh("printf 'a small clean file\\n' | dd of=\(shq(p))/small.txt conv=fsync status=none", timeout: 120)
        XCTAssertTrue(seed.succeeded, "\(seed)", file: file, line: line)
        let hostname = try Data(contentsOf: URL(fileURLWithPath: "/etc/hostname"))
        for (name, second) in [("catted.bin", "/etc/hostname"), ("catted2.bin", p + "/small.txt")] {
            let cat = try TimedProcess.sh("cat \(shq(p))/src.bin \(shq(second)) > \(shq(p))/\(name)", timeout: 300)
            XCTAssertTrue(cat.succeeded, "cat src.bin \(second) > \(name): \(cat)", file: file, line: line)
        }

        // 2. A file still being written (dirty: its bytes are only here) is copied through this
        // machine, and the copy has the bytes written, not the server's (none yet).
        let dirty = try TimedProcess.run("/usr/bin/python3", ["-c", """
            import os, subprocess, sys
            d = sys.argv[1]
            fd = os.open(d + "/dirty.bin", os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644)
            data = bytes(range(256)) * 8192
            os.write(fd, data)
            r = subprocess.run(["cp", d + "/dirty.bin", d + "/dirty-copy.bin"])
            os.write(fd, b"more after the copy")
            os.close(fd)
            print("cp", r.returncode)
            """, p], timeout: 300)
        XCTAssertTrue(dirty.succeeded && dirty.stdout.contains("cp 0"), "\(dirty)", file: file, line: line)

        // Over an existing file (not new: it may be replaced only through its own upload, with
        // its version checked): copied through this machine.
        let over = try TimedProcess.sh("cp \(shq(p))/dirty.bin \(shq(p))/reflink.bin", timeout: 300)
        XCTAssertTrue(over.succeeded, "cp over an existing file: \(over)", file: file, line: line)

        // 3. A partial range (offsets inside the files) is copied through this machine.
        let partial = try TimedProcess.run("/usr/bin/python3", ["-c", """
            import os, sys
            d = sys.argv[1]
            src = os.open(d + "/src.bin", os.O_RDONLY | os.O_CLOEXEC)
            dst = os.open(d + "/part.bin", os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644)
            os.write(dst, b"head")
            n = os.copy_file_range(src, dst, 100000, 12345, 4)
            os.close(dst); os.close(src)
            print("copied", n)
            """, p], timeout: 300)
        XCTAssertTrue(partial.succeeded && partial.stdout.contains("copied 100000"), "\(partial)", file: file, line: line)

        // For comparison (printed, not asserted): the same bytes through this machine, a read of
        // the source and a write (dd's fsync makes it durable here; the upload follows).
        let through = try TimedProcess.sh("dd if=\(shq(p))/src.bin of=\(shq(p))/through.bin bs=1M conv=fsync status=none", timeout: 300)
        XCTAssertTrue(through.succeeded, "\(through)", file: file, line: line)
        timings.append(String(format: "dd through this machine (download + upload, fsync) %.2f s", through.elapsed))
        print("server-side copy of \(source.count >> 20) MiB on \(m.remote.prefix(5)): " + timings.joined(separator: ", "))

        // 4. After unmount (pending uploads done): everything is at the server as it should be,
        // and no empty upload replaced a copy.
        let u = try m.unmount(timeout: 300)
        XCTAssertTrue(u.succeeded, "unmount: \(u)", file: file, line: line)
        let written = Data((0..<8192).flatMap { _ in (0..<256).map { UInt8($0) } })
        XCTAssertEqual(try server.contents("copy.bin"), source, "copy.bin after unmount", file: file, line: line)
        XCTAssertEqual(try server.contents("preserved.bin"), source, "preserved.bin after unmount", file: file, line: line)
        XCTAssertEqual(try server.contents("reflink.bin"), written + Data("more after the copy".utf8), "cp over reflink.bin", file: file, line: line)
        XCTAssertEqual(try server.contents("dirty-copy.bin"), written, "the copy of a file being written", file: file, line: line)
        XCTAssertEqual(try server.contents("dirty.bin"), written + Data("more after the copy".utf8), file: file, line: line)
        XCTAssertEqual(try server.contents("part.bin"), Data("head".utf8) + source[12345..<(12345 + 100000)], "the partial copy", file: file, line: line)
        XCTAssertEqual(try server.contents("src.bin"), source, "the source is untouched", file: file, line: line)
        XCTAssertEqual(try server.contents("through.bin"), source, file: file, line: line)
        XCTAssertEqual(try server.contents("catted.bin"), source + hostname, "cat src.bin /etc/hostname", file: file, line: line)
        XCTAssertEqual(try server.contents("catted2.bin"), source + small, "cat src.bin small.txt", file: file, line: line)
        let lost = (try? FileManager.default.contentsOfDirectory(atPath: m.cacheDir.appendingPathComponent("lost+found").path)) ?? []
        XCTAssertEqual(lost, [], "lost+found", file: file, line: line)
    }

    static func randomData(_ n: Int) -> Data {
        var g = SystemRandomNumberGenerator()
        var d = Data(count: n)
        d.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for i in 0..<words.count { words[i] = g.next() }
        }
        return d
    }
}
