import Foundation
import TestSupport
import XCTest

/// Where a write test's remote keeps its files on this machine, so results can be checked on
/// the server side, and how to change a file there behind favfs's back.
struct ServerSide {
    let root: String
    /// Called after the test wrote into `root` directly (Apache needs to own its files).
    let fixOwnership: () throws -> Void

    func path(_ rel: String) -> String { (root as NSString).appendingPathComponent(rel) }
    func data(_ rel: String) -> Data? { FileManager.default.contents(atPath: path(rel)) }

    /// Waits (bounded) until the server has `expected` at `rel` (uploads are asynchronous).
    func waitFor(_ rel: String, _ expected: Data, timeout: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if data(rel) == expected { return true }
            usleep(50_000)
        }
        return false
    }
}

/// The write-back cases both providers share: each mounts its own favfs, works in its own
/// folder, unmounts (which waits for uploads) and checks the server side.
enum WriteBackChecks {
    static func payload(_ n: Int, seed: UInt64) -> Data {
        var rng = SeededRandom(seed: seed)
        var d = Data(count: n)
        d.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for i in 0..<words.count { words[i] = rng.next() }
            for i in (words.count * 8)..<n { raw[i] = UInt8(truncatingIfNeeded: rng.next()) }
        }
        return d
    }

    static func sh(_ command: String, timeout: Double = 120) throws -> TimedProcess.Result {
        try TimedProcess.sh(command, timeout: timeout)
    }

    static func unmountOrFail(_ mnt: MountedFavFS, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try mnt.unmount(timeout: 300)
        XCTAssertTrue(r.succeeded, "favfs unmount: \(r)", file: file, line: line)
    }

    /// `cp -r` of a 300-file tree into the mount equals the source on the server.
    static func copyTreeIn(_ mnt: MountedFavFS, _ server: ServerSide, scratch: URL) throws {
        let src = scratch.appendingPathComponent("tree")
        var rng = SeededRandom(seed: 300)
        let names = ["a b", "ünï ☃", "#h", "100%", "q?", "a+b", "it's", "a&b", "semi;colon", "co:lon", "dots..."]
        for i in 0..<300 {
            let dir = src.appendingPathComponent("d\(i % 7)").appendingPathComponent(i % 3 == 0 ? "deep/er" : "")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let name = i < names.count ? names[i] : "file-\(i).bin"
            let size = i == 299 ? 5 << 20 : Int.random(in: 0...40_000, using: &rng)
            try payload(size, seed: UInt64(i)).write(to: dir.appendingPathComponent(name))
        }
        try mnt.mountOrThrow()
        let cp = try sh("cp -r \(shq(src.path)) \(shq(mnt.path + "/copy"))", timeout: 300)
        XCTAssertTrue(cp.succeeded, "cp -r: \(cp)")
        // Through the mount at once, before any upload finished.
        XCTAssertEqual(try Tree.hashes(src.path).stdout, try Tree.hashes(mnt.path + "/copy").stdout)
        try unmountOrFail(mnt)
        XCTAssertEqual(try Tree.hashes(src.path).stdout, try Tree.hashes(server.path("copy")).stdout,
                       "the server's copy differs from the source")
        let a = try Tree.listing(src.path).mapValues { "\($0.kind) \($0.kind == "f" ? $0.size : 0)" }
        let b = try Tree.listing(server.path("copy")).mapValues { "\($0.kind) \($0.kind == "f" ? $0.size : 0)" }
        XCTAssertEqual(a, b)
    }

    /// Editors save by writing a temp file and renaming it over the original.
    static func saveByRename(_ mnt: MountedFavFS, _ server: ServerSide) throws {
        try mnt.mountOrThrow()
        let d = shq(mnt.path + "/sbr")
        let r = try sh("""
            set -e; mkdir \(d); cd \(d)
            printf 'version 1' > doc.txt
            printf 'version 2, longer' > .doc.txt.swp && mv .doc.txt.swp doc.txt
            mv doc.txt doc.txt~ && printf 'version 3' > doc.txt && rm doc.txt~
            cat doc.txt; echo; ls -A
            """)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertEqual(r.stdout, "version 3\ndoc.txt\n")
        try unmountOrFail(mnt)
        XCTAssertEqual(server.data("sbr/doc.txt"), Data("version 3".utf8))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: server.path("sbr")), ["doc.txt"])
    }

    /// Folder rename carries its content; `rm -r` removes a subtree; rename over an existing file.
    static func renameAndRemove(_ mnt: MountedFavFS, _ server: ServerSide) throws {
        try mnt.mountOrThrow()
        let d = shq(mnt.path + "/rr")
        let r = try sh("""
            set -e; mkdir -p \(d)/a/b/c; cd \(d)
            echo top > a/top.txt; echo mid > a/b/mid.txt; echo low > a/b/c/low.txt; echo old > target.txt
            mv a z
            rm -r z/b
            echo new > src.txt && mv src.txt target.txt
            find . | LC_ALL=C sort
            """)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertEqual(r.stdout, ".\n./target.txt\n./z\n./z/top.txt\n")
        try unmountOrFail(mnt)
        let server = try Tree.listing(server.path("rr")).keys.sorted()
        XCTAssertEqual(server, ["target.txt", "z", "z/top.txt"])
    }

    /// Truncate shorter keeps the prefix; longer adds zeros; O_TRUNC empties.
    static func truncate(_ mnt: MountedFavFS, _ server: ServerSide) throws {
        let base = payload(100_000, seed: 5)
        try FileManager.default.createDirectory(atPath: server.path("tr"), withIntermediateDirectories: true)
        try base.write(to: URL(fileURLWithPath: server.path("tr/f.bin")))
        try base.write(to: URL(fileURLWithPath: server.path("tr/g.bin")))
        try server.fixOwnership()
        try mnt.mountOrThrow()
        let d = shq(mnt.path + "/tr")
        let r = try sh("set -e; cd \(d); truncate -s 1000 f.bin; truncate -s 3000 f.bin; : > g.bin; stat -c %s f.bin g.bin")
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertEqual(r.stdout, "3000\n0\n")
        try unmountOrFail(mnt)
        XCTAssertEqual(server.data("tr/f.bin"), base.prefix(1000) + Data(count: 2000))
        XCTAssertEqual(server.data("tr/g.bin"), Data())
    }

    /// A 48 MiB file written, the daemon killed with -9 before its upload finished: the next
    /// mount of that cache dir finishes it.
    static func killDuringUpload(remote: String, _ server: ServerSide, scratch: URL) throws {
        let big = payload(48 << 20, seed: 48)
        let src = scratch.appendingPathComponent("big.bin")
        try big.write(to: src)
        let cache = scratch.appendingPathComponent("kill-cache")
        let first = try MountedFavFS(remote: remote, cacheDir: cache)
        defer { first.tearDown() }
        try first.mountOrThrow()
        let daemons = MountedFavFS.processes(mentioning: first.path)
        XCTAssertEqual(daemons.count, 1, "one favfs daemon per mount")
        guard let pid = daemons.first else { return }
        // Held open: the last close (which starts the upload) never comes. The second file is
        // closed, so its upload may be under way when the kill lands.
        let d = shq(first.path + "/k")
        let r = try sh("""
            mkdir \(d) && cp \(shq(src.path)) \(d)/closed.bin && exec 3>\(d)/open.bin && cat \(shq(src.path)) >&3 && kill -9 \(pid)
            """, timeout: 300)
        XCTAssertTrue(r.succeeded, "\(r)")
        first.tearDown() // cleans up the dead mount; the cache dir is ours
        let second = try MountedFavFS(remote: remote, cacheDir: cache)
        defer { second.tearDown() }
        try second.mountOrThrow()
        try unmountOrFail(second)
        XCTAssertEqual(server.data("k/open.bin")?.count, big.count)
        XCTAssertTrue(server.data("k/open.bin") == big, "the held-open file did not reach the server intact")
        XCTAssertTrue(server.data("k/closed.bin") == big, "the closed file did not reach the server intact")
    }

    /// Mounts, writes FOLDER/doc.txt ("base") through the mount and waits until the server has
    /// it; returns the folder's path in the mount.
    private static func baseDocument(_ mnt: MountedFavFS, _ server: ServerSide, in folder: String, extraArgs: [String] = []) throws -> String {
        try mnt.mountOrThrow(extraArgs: extraArgs)
        let d = mnt.path + "/" + folder
        XCTAssertTrue(try sh("mkdir \(shq(d)) && printf base > \(shq(d + "/doc.txt"))").succeeded)
        XCTAssertTrue(server.waitFor(folder + "/doc.txt", Data("base".utf8)), "the base version was never uploaded")
        return d
    }

    /// The names in FOLDER at the server, and those of doc.txt's conflict copies.
    private static func conflictCopies(_ server: ServerSide, in folder: String) throws -> (names: [String], copies: [String]) {
        let names = try FileManager.default.contentsOfDirectory(atPath: server.path(folder)).sorted()
        return (names, names.filter { $0.hasPrefix("doc (conflict ") && $0.hasSuffix(").txt") })
    }

    /// The remote changed while the file was open for writing here: the remote keeps its name,
    /// the local content lands beside it as a conflict copy.
    static func conflict(_ mnt: MountedFavFS, _ server: ServerSide) throws {
        let d = try baseDocument(mnt, server, in: "cf")
        // Open read-write (materialized from the server), change the server behind favfs's
        // back, then write and close.
        let r = try sh("""
            exec 3<>\(shq(d + "/doc.txt")) || exit 1
            sleep 1.1; printf 'remote edit' > \(shq(server.path("cf/doc.txt"))); chown www-data:www-data \(shq(server.path("cf/doc.txt"))) 2>/dev/null
            printf 'local edit' >&3 && exec 3>&-
            """)
        XCTAssertTrue(r.succeeded, "\(r)")
        try unmountOrFail(mnt)
        XCTAssertEqual(server.data("cf/doc.txt"), Data("remote edit".utf8), "the remote version was overwritten")
        let (names, copies) = try conflictCopies(server, in: "cf")
        XCTAssertEqual(copies.count, 1, "expected one conflict copy in \(names)")
        if let c = copies.first { XCTAssertEqual(server.data("cf/" + c), Data("local edit".utf8)) }
    }

    /// The remote changed while the file was open; the program's fsync made the conflict copy,
    /// and the program goes on writing through its descriptor: those writes belong to its edit,
    /// now the copy, and reach the server there (they were once acknowledged and lost).
    static func writesAfterAConflictCopy(_ mnt: MountedFavFS, _ server: ServerSide) throws {
        let d = try baseDocument(mnt, server, in: "cw")
        let r = try sh("""
            /usr/bin/python3 -c '
            import os, sys, time
            fd = os.open(sys.argv[1], os.O_RDWR)
            time.sleep(1.1)
            with open(sys.argv[2], "w") as f: f.write("remote edit")
            os.write(fd, b"local edit")
            os.fsync(fd)
            os.write(fd, b" and more")
            os.close(fd)
            ' \(shq(d + "/doc.txt")) \(shq(server.path("cw/doc.txt")))
            """)
        XCTAssertTrue(r.succeeded, "\(r)")
        try server.fixOwnership()
        try unmountOrFail(mnt)
        XCTAssertEqual(server.data("cw/doc.txt"), Data("remote edit".utf8), "the remote version was overwritten")
        let (names, copies) = try conflictCopies(server, in: "cw")
        XCTAssertEqual(copies.count, 1, "expected one conflict copy in \(names)")
        if let c = copies.first { XCTAssertEqual(server.data("cw/" + c), Data("local edit and more".utf8), "the writes after the fsync were lost") }
    }

    /// A program has the file open for writing, unchanged; the file changes on the server and
    /// another program reads the new version here. The first program's later writes cannot be
    /// kept (the new version took the file's cache): they fail with ESTALE instead of being
    /// acknowledged and dropped (and written into the cache of the new version: a reader then
    /// saw bytes the server never had).
    static func writeBehindANewerOpen(_ mnt: MountedFavFS, _ server: ServerSide) throws {
        let d = try baseDocument(mnt, server, in: "wn", extraArgs: ["--poll-interval", "1"])
        let r = try sh("""
            /usr/bin/python3 -c '
            import errno, os, sys, time
            fd = os.open(sys.argv[1], os.O_RDWR)
            time.sleep(1.1)
            with open(sys.argv[2], "w") as f: f.write("remote edit")
            deadline = time.time() + 20
            while open(sys.argv[1]).read() != "remote edit":
                if time.time() > deadline: sys.exit("the mount never showed the remote edit")
                time.sleep(0.2)
            try:
                os.write(fd, b"XXXXXXXXXXXXXXXX")
                os.fsync(fd)
                os.close(fd)
            except OSError as e:
                print("refused", errno.errorcode[e.errno])
                sys.exit(0)
            print("acknowledged")
            ' \(shq(d + "/doc.txt")) \(shq(server.path("wn/doc.txt")))
            """)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(r.stdout.contains("refused ESTALE"), "a write behind a newer open was not refused with ESTALE: \(r)")
        XCTAssertEqual(try String(contentsOfFile: d + "/doc.txt", encoding: .utf8), "remote edit", "the mount shows bytes the server does not have")
        try unmountOrFail(mnt)
        XCTAssertEqual(server.data("wn/doc.txt"), Data("remote edit".utf8), "the remote version was overwritten")
    }

    /// A program has the file open for writing, unchanged, when another client deletes it; the
    /// mount notices; then the program writes and closes. Its edit is not acknowledged and lost
    /// (it was: every upload failed "the item to upload is gone", invisible): the file comes
    /// back, and its upload, finding the version it was based on gone, is a conflict copy.
    static func writeAfterARemoteDelete(_ mnt: MountedFavFS, _ server: ServerSide) throws {
        let d = try baseDocument(mnt, server, in: "wd", extraArgs: ["--poll-interval", "1"])
        let r = try sh("""
            /usr/bin/python3 -c '
            import os, sys, time
            fd = os.open(sys.argv[1], os.O_RDWR)
            os.unlink(sys.argv[2])
            deadline = time.time() + 20
            while "doc.txt" in os.listdir(os.path.dirname(sys.argv[1])):
                if time.time() > deadline: sys.exit("the mount never noticed the delete")
                time.sleep(0.2)
            os.pwrite(fd, b" and more", 4)
            os.fsync(fd)
            os.close(fd)
            ' \(shq(d + "/doc.txt")) \(shq(server.path("wd/doc.txt")))
            """)
        XCTAssertTrue(r.succeeded, "\(r)")
        try unmountOrFail(mnt)
        let (names, copies) = try conflictCopies(server, in: "wd")
        XCTAssertEqual(copies.count, 1, "expected the edit as one conflict copy in \(names)")
        if let c = copies.first { XCTAssertEqual(server.data("wd/" + c), Data("base and more".utf8), "the edit after the remote delete was lost") }
        XCTAssertFalse(names.contains("doc.txt"), "the deleted name came back at the server: \(names)")
    }

    /// A seeded sequence of creates, writes at offsets, truncates, renames and unlinks, checked
    /// against an in-memory model through the mount, then on the server after unmount.
    static func randomOperations(_ mnt: MountedFavFS, _ server: ServerSide, seed: UInt64, steps: Int) throws {
        try mnt.mountOrThrow(extraArgs: ProcessInfo.processInfo.environment["FAVFS_TEST_DEBUG"] != nil ? ["--log-level", "debug"] : [])
        let root = mnt.path + "/rnd"
        let dirs = ["", "d0", "d1/e"]
        for dir in dirs { try FileManager.default.createDirectory(atPath: root + "/" + dir, withIntermediateDirectories: true) }
        var model: [String: [UInt8]] = [:]
        var rng = SeededRandom(seed: seed)
        func randomPath() -> String {
            let dir = dirs.randomElement(using: &rng)!
            return (dir.isEmpty ? "" : dir + "/") + "f\(Int.random(in: 0..<5, using: &rng))"
        }
        func check(_ path: String, step: Int) {
            let got = FileManager.default.contents(atPath: root + "/" + path).map { [UInt8]($0) }
            if got != model[path] {
                XCTFail("step \(step): \(path) differs from the model: \(describe(got)) vs model \(describe(model[path]))")
            }
        }
        for step in 0..<steps {
            let existing = model.keys.sorted()
            let op = Int.random(in: 0..<100, using: &rng)
            if op < 45 || existing.isEmpty {
                let path = existing.isEmpty || op < 20 ? randomPath() : existing.randomElement(using: &rng)!
                var content = model[path] ?? []
                let offset = Int.random(in: 0...(content.count + 2000), using: &rng)
                let bytes = (0..<Int.random(in: 1...20_000, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let fd = open(root + "/" + path, O_WRONLY | O_CREAT, 0o644)
                XCTAssertGreaterThanOrEqual(fd, 0, "step \(step): open \(path): \(String(cString: strerror(errno)))")
                guard fd >= 0 else { return }
                let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
                XCTAssertEqual(n, bytes.count, "step \(step): pwrite \(path)")
                close(fd)
                if offset > content.count { content += [UInt8](repeating: 0, count: offset - content.count) }
                let end = offset + bytes.count
                if end > content.count { content += [UInt8](repeating: 0, count: end - content.count) }
                content.replaceSubrange(offset..<end, with: bytes)
                model[path] = content
            } else if op < 60 {
                let path = existing.randomElement(using: &rng)!
                let size = Int.random(in: 0...(model[path]!.count + 3000), using: &rng)
                XCTAssertEqual(Glibc.truncate(root + "/" + path, off_t(size)), 0, "step \(step): truncate \(path)")
                var c = model[path]!
                if size < c.count { c.removeSubrange(size...) } else { c += [UInt8](repeating: 0, count: size - c.count) }
                model[path] = c
            } else if op < 75 {
                let from = existing.randomElement(using: &rng)!, to = randomPath()
                XCTAssertEqual(rename(root + "/" + from, root + "/" + to), 0,
                               "step \(step): rename \(from) -> \(to): \(String(cString: strerror(errno)))")
                if from != to { model[to] = model.removeValue(forKey: from) }
            } else if op < 85 {
                let path = existing.randomElement(using: &rng)!
                XCTAssertEqual(unlink(root + "/" + path), 0, "step \(step): unlink \(path)")
                model[path] = nil
            } else {
                check(existing.randomElement(using: &rng)!, step: step)
            }
        }
        for path in model.keys.sorted() { check(path, step: steps) }
        let log = (try? String(contentsOf: mnt.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
        let trouble = log.split(separator: "\n").filter { $0.contains("warning") || $0.contains("error") }
        if !trouble.isEmpty { print("favfs.log warnings and errors:\n" + trouble.suffix(40).joined(separator: "\n")) }
        if let keep = ProcessInfo.processInfo.environment["FAVFS_TEST_DEBUG"] { try? log.write(toFile: keep, atomically: true, encoding: .utf8) }
        try unmountOrFail(mnt)
        let files = try Tree.listing(server.path("rnd")).filter { $0.value.kind == "f" }.keys.sorted()
        XCTAssertEqual(files, model.keys.sorted(), "the server's files differ from the model")
        for path in model.keys.sorted() {
            let got = server.data("rnd/" + path).map { [UInt8]($0) }
            if got != model[path] { XCTFail("server: \(path) differs from the model: \(describe(got)) vs \(describe(model[path]))") }
        }
    }

    /// A short description of content for failure messages (no byte dumps).
    static func describe(_ bytes: [UInt8]?) -> String {
        guard let bytes else { return "missing" }
        var h: UInt64 = 0xcbf29ce484222325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        return "\(bytes.count) bytes, fnv \(String(h, radix: 16))"
    }

    /// What no remote has answers its errno: hard links and device nodes EPERM.
    static func unsupported(_ mnt: MountedFavFS, symlinks: Bool) throws {
        try mnt.mountOrThrow()
        let d = shq(mnt.path + "/u")
        XCTAssertTrue(try sh("mkdir \(d) && echo x > \(d)/f").succeeded)
        let link = try sh("ln \(d)/f \(d)/hard")
        XCTAssertFalse(link.succeeded)
        XCTAssertTrue(link.stderr.contains("Operation not permitted"), "\(link)")
        let fifo = try sh("mkfifo \(d)/fifo")
        XCTAssertFalse(fifo.succeeded)
        let sym = try sh("ln -s f \(d)/sym && readlink \(d)/sym")
        if symlinks {
            XCTAssertTrue(sym.succeeded, "\(sym)")
            XCTAssertEqual(sym.stdout, "f\n")
        } else {
            XCTAssertFalse(sym.succeeded)
            XCTAssertTrue(sym.stderr.contains("Operation not supported"), "\(sym)")
        }
        try unmountOrFail(mnt)
    }
}
