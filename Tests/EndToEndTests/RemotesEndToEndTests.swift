import Foundation
import TestSupport
import XCTest

/// Named remotes through the real binary: `favfs remote add|list|remove|default|test`, mounts by
/// name and by default, the remotes file's privacy, and secrets never in argv, output or logs.
/// Each test has its own XDG_CONFIG_HOME and XDG_CACHE_HOME (temp folders).
final class RemotesEndToEndTests: XCTestCase {
    static let user = "alice"
    static let secret = "s3cret \"pässword\" #=\\"
    var base: URL!
    var config: URL { base.appendingPathComponent("config") }
    var cache: URL { base.appendingPathComponent("cache") }
    var remotesFile: String { config.appendingPathComponent("favfs/remotes.toml").path }
    var servers: [ApacheServer] = []
    var mounts: [MountedFavFS] = []

    override func setUpWithError() throws {
        try E2EGate.require(apache: false)
        base = URL(fileURLWithPath: "/tmp").appendingPathComponent("favfs-e2e-remotes-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        mounts = []
        for s in servers { s.remove() }
        servers = []
        if let base { try? FileManager.default.removeItem(at: base) }
        super.tearDown()
    }

    /// Runs favfs with this test's config and cache homes.
    func favfs(_ args: [String], stdin: String? = nil, timeout: Double = 60) throws -> TimedProcess.Result {
        try TimedProcess.run("/usr/bin/env", ["XDG_CONFIG_HOME=\(config.path)", "XDG_CACHE_HOME=\(cache.path)", FavFSBinary.path] + args,
                             stdin: stdin, timeout: timeout)
    }

    @discardableResult
    func ok(_ args: [String], stdin: String? = nil, timeout: Double = 60, file: StaticString = #filePath, line: UInt = #line) throws -> TimedProcess.Result {
        let r = try favfs(args, stdin: stdin, timeout: timeout)
        XCTAssertTrue(r.succeeded, "favfs \(args.joined(separator: " ")): \(r)", file: file, line: line)
        return r
    }

    @discardableResult
    func fails(_ args: [String], stdin: String? = nil, saying words: [String], timeout: Double = 60,
               file: StaticString = #filePath, line: UInt = #line) throws -> TimedProcess.Result {
        let r = try favfs(args, stdin: stdin, timeout: timeout)
        XCTAssertNotEqual(r.status, 0, "favfs \(args.joined(separator: " ")) succeeded: \(r)", file: file, line: line)
        XCTAssertFalse(r.timedOut, "favfs \(args.joined(separator: " ")) hung: \(r)", file: file, line: line)
        for w in words {
            XCTAssertTrue(r.stderr.contains(w), "favfs \(args.joined(separator: " ")): stderr should say '\(w)': \(r)", file: file, line: line)
        }
        return r
    }

    /// An fstab line `nas /home/me/nas fuse.favfs noauto,user` run as `mount ~/nas` from the home
    /// folder: mount(8) makes the source `/home/me/nas` (a folder named nas is there); favfs
    /// takes the remote named by its last component.
    func testAnFstabSourceMountMadeIntoAPathStillNamesTheRemote() throws {
        let folder = try localFolder()
        try ok(["remote", "add", "nas", "file://" + folder.path])
        let m = try MountedFavFS(remote: "nas", cacheDir: cache.appendingPathComponent("nas"))
        mounts.append(m)
        let r = try favfs([base.appendingPathComponent("nas").path, m.path, "-o", "noauto,user,_netdev"])
        XCTAssertTrue(r.succeeded && m.isMounted, "\(r)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m.path).sorted(),
                       try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted())
        XCTAssertTrue(try ok(["unmount", m.path]).succeeded)
    }

    /// A local folder with two files.
    func localFolder() throws -> URL {
        let d = base.appendingPathComponent("local")
        try FileManager.default.createDirectory(at: d.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try Data("hello\n".utf8).write(to: d.appendingPathComponent("hello.txt"))
        try Data("b\n".utf8).write(to: d.appendingPathComponent("sub/b.txt"))
        return d
    }

    /// Apache with Basic auth serving hello.txt and sub/.
    func davServer() throws -> ApacheServer {
        try E2EGate.require(apache: true)
        let s = try ApacheServer(auth: .basic(user: Self.user, password: Self.secret))
        servers.append(s)
        try FileManager.default.createDirectory(at: s.documentRoot.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try Data("hello over dav\n".utf8).write(to: s.documentRoot.appendingPathComponent("hello.txt"))
        try s.start()
        return s
    }

    func mode(_ path: String) -> mode_t {
        var st = stat()
        guard stat(path, &st) == 0 else { return 0 }
        return st.st_mode & 0o777
    }

    // MARK: add / list / default / remove / test with a file:// remote

    func testLocalRemoteLifecycle() throws {
        let folder = try localFolder()
        let r = try ok(["remote", "list"])
        XCTAssertTrue(r.stdout.contains("no remotes"), r.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: remotesFile), "list must not create the file")

        try ok(["remote", "add", "ref", "file://" + folder.path])
        XCTAssertEqual(mode(remotesFile), 0o600, "the remotes file's mode")
        XCTAssertEqual(mode((remotesFile as NSString).deletingLastPathComponent), 0o700, "the remotes folder's mode")
        try fails(["remote", "add", "ref", "file:///elsewhere"], saying: ["'ref' exists already", "--force"])
        // A typo in an option is refused when the remote is saved, not at the first mount.
        try fails(["remote", "add", "ref", "file://" + folder.path, "--option", "x=1=2", "--force"], saying: ["unknown option 'x'"])
        try ok(["remote", "add", "other.one", "file:///tmp", "--default"])

        let list = try ok(["remote", "list"]).stdout
        XCTAssertTrue(list.contains("ref\n  url: file://\(folder.path)\n"), list)
        XCTAssertTrue(list.contains("other.one (default)\n  url: file:///tmp"), list)

        try ok(["remote", "default", "ref"])
        XCTAssertEqual(try ok(["remote", "default"]).stdout, "ref\n")
        XCTAssertTrue(try ok(["remote", "list"]).stdout.contains("ref (default)"))

        try ok(["remote", "add", "ref", "file://" + folder.path, "--force"])
        let test = try ok(["remote", "test", "ref"]).stdout
        XCTAssertTrue(test.contains("ref (file://\(folder.path)): ok"), test)
        XCTAssertTrue(test.contains("2 items"), test)
        XCTAssertTrue(test.contains("access: read-write"), test)
        XCTAssertTrue(test.contains("capabilities: ") && test.contains("ranged-reads"), test)
        XCTAssertTrue(test.contains("quota: "), test)
        // A URL works too, and an --option on the command line reaches the provider.
        try ok(["remote", "test", "file://" + folder.path])
        try fails(["remote", "test", "ref", "--option", "bogus=1"], saying: ["unknown option 'bogus'"])

        try fails(["remote", "test", "nope"], saying: ["no remote named 'nope'", "known: ref, other.one"])
        try fails(["remote", "add", "a b", "file:///tmp"], saying: ["not a valid remote name"])
        try fails(["remote", "add", "x", "nope://x"], saying: ["unsupported remote scheme"])
        try fails(["remote", "add", "x", "dav://u:pw@127.0.0.1/"], saying: ["--password-stdin"])
        try fails(["remote", "add", "x", "file:///tmp", "--option", "novalue"], saying: ["KEY=VALUE"])
        try fails(["remote", "add", "x", "file:///tmp", "--password-stdin"], stdin: "", saying: ["no secret"])
        try fails(["remote", "default", "nope"], saying: ["no remote named 'nope'"])

        try ok(["remote", "remove", "ref"])
        try fails(["remote", "remove", "ref"], saying: ["no remote named 'ref'"])
        XCTAssertFalse(try ok(["remote", "list"]).stdout.contains("ref"))
        try fails(["remote", "test", "file://" + folder.path + "/missing"], saying: ["no such folder"])
        XCTAssertEqual(mode(remotesFile), 0o600)
    }

    func testHelpHasExamples() throws {
        for args in [["remote", "--help"], ["remote", "add", "--help"], ["remote", "list", "--help"], ["remote", "test", "--help"],
                     ["remote", "remove", "--help"], ["remote", "default", "--help"], ["mount", "--help"]] {
            let r = try favfs(args)
            XCTAssertTrue(r.stdout.contains("Examples:") || r.stdout.contains("Example:"), "\(args): \(r)")
        }
    }

    // MARK: a dav:// remote with Basic auth and a stored secret

    func testDavRemoteWithStoredSecret() throws {
        let s = try davServer()
        let url = "dav://\(Self.user)@127.0.0.1:\(s.port)/files/"
        try ok(["remote", "add", "nas", url, "--password-stdin", "--default"], stdin: Self.secret + "\n")
        let list = try ok(["remote", "list"])
        XCTAssertTrue(list.stdout.contains("nas (default)\n  url: \(url)\n  secret: stored"), list.stdout)
        XCTAssertFalse(list.stdout.contains("s3cret") || list.stderr.contains("s3cret"), "list shows the secret: \(list)")
        XCTAssertEqual(mode(remotesFile), 0o600)

        let test = try ok(["remote", "test", "nas"])
        XCTAssertTrue(test.stdout.contains("nas (\(url)): ok"), test.stdout)
        XCTAssertTrue(test.stdout.contains("2 items"), test.stdout)
        XCTAssertTrue(test.stdout.contains("ms"), test.stdout)
        XCTAssertTrue(test.stdout.contains("capabilities: write, rename, delete, create-folder"), test.stdout)
        XCTAssertFalse(test.stdout.contains("s3cret"), test.stdout)

        // A wrong stored secret: denied, with the way to fix it.
        try ok(["remote", "add", "nas", url, "--password-stdin", "--force"], stdin: "wrong\n")
        XCTAssertTrue(try ok(["remote", "list"]).stdout.contains("nas (default)"), "a replaced remote stays the default")
        let denied = try fails(["remote", "test", "nas"], saying: ["authentication failed or access denied", "HTTP 401", "--password-stdin --force"])
        XCTAssertFalse(denied.stderr.contains("wrong"), "the message shows the secret: \(denied)")
        // --password-stdin on the test wins over the stored one.
        try ok(["remote", "test", "nas", "--password-stdin"], stdin: Self.secret + "\n")

        // Unreachable: a port where nothing listens.
        let port = try FreePort.next()
        try ok(["remote", "add", "down", "dav://127.0.0.1:\(port)/files/"])
        try fails(["remote", "test", "down"], saying: ["cannot reach dav://127.0.0.1:\(port)/files/"])
    }

    // MARK: the file's privacy

    func testGroupReadableFileIsRefusedByEveryCommand() throws {
        let folder = try localFolder()
        try ok(["remote", "add", "ref", "file://" + folder.path, "--default"])
        XCTAssertEqual(chmod(remotesFile, 0o644), 0)
        let m = try MountedFavFS(remote: "ref")
        mounts.append(m)
        let commands: [[String]] = [
            ["remote", "list"], ["remote", "add", "x", "file:///tmp"], ["remote", "remove", "ref"],
            ["remote", "default", "ref"], ["remote", "default"], ["remote", "test", "ref"],
            ["mount", m.path, "--remote", "ref", "--cache-dir", m.cacheDir.path], ["mount", m.path, "--cache-dir", m.cacheDir.path],
        ]
        for c in commands {
            try fails(c, saying: [remotesFile, "chmod 600 \(remotesFile)"])
        }
        XCTAssertFalse(m.isMounted)
        XCTAssertEqual(chmod(remotesFile, 0o600), 0)
        try ok(["remote", "list"])
    }

    func testMountWithoutRemoteAndWithoutDefault() throws {
        let m = try MountedFavFS(remote: "")
        mounts.append(m)
        try fails(["mount", m.path], saying: ["no --remote given and no default remote: favfs remote add NAME URL --default"])
        try ok(["remote", "add", "ref", "file:///tmp"])
        try fails(["mount", m.path], saying: ["no --remote given and no default remote"])
        try fails(["mount", m.path, "--remote", "nope"], saying: ["no remote named 'nope'"])
        XCTAssertFalse(m.isMounted)
    }

    // MARK: mounting named remotes; secrets stay out of argv and logs

    func testMountByNameAndByDefaultKeepsTheSecretOutOfArgvAndLogs() throws {
        let s = try davServer()
        let url = "dav://\(Self.user)@127.0.0.1:\(s.port)/files/"
        try ok(["remote", "add", "nas", url, "--password-stdin"], stdin: Self.secret + "\n")
        let basic = Data("\(Self.user):\(Self.secret)".utf8).base64EncodedString()

        // By name, with an explicit cache dir and the most verbose log.
        let byName = try MountedFavFS(remote: "nas")
        mounts.append(byName)
        let r = try ok(["mount", byName.path, "--remote", "nas", "--cache-dir", byName.cacheDir.path, "--log-level", "trace"], timeout: 90)
        XCTAssertTrue(r.stdout.contains("mounted nas (\(url))"), r.stdout)
        XCTAssertTrue(byName.isMounted)
        let cat = try TimedProcess.sh("cat \(shq(byName.path + "/hello.txt"))", timeout: 60)
        XCTAssertEqual(cat.stdout, "hello over dav\n", "cat: \(cat)")
        let status = try favfs(["status"])
        XCTAssertTrue(status.stdout.contains("remote: \(url)") && status.stdout.contains("name: nas"), "status: \(status)")
        XCTAssertFalse(status.stdout.contains("s3cret"), "status: \(status)")
        try assertNoSecret(in: byName, also: [basic])
        XCTAssertTrue(try byName.unmount().succeeded)
        XCTAssertFalse(byName.isMounted)
        try assertLogHasNoSecret(byName.cacheDir.appendingPathComponent("favfs.log").path, also: [basic])

        // By default, the cache dir by default: $XDG_CACHE_HOME/favfs/<the URL's slug>.
        try ok(["remote", "default", "nas"])
        let byDefault = try MountedFavFS(remote: "nas")
        mounts.append(byDefault)
        try ok(["mount", byDefault.path, "--log-level", "debug"], timeout: 90)
        let cat2 = try TimedProcess.sh("cat \(shq(byDefault.path + "/hello.txt"))", timeout: 60)
        XCTAssertEqual(cat2.stdout, "hello over dav\n", "cat: \(cat2)")
        try assertNoSecret(in: byDefault, also: [basic])
        XCTAssertTrue(try byDefault.unmount().succeeded)
        let caches = try FileManager.default.contentsOfDirectory(atPath: cache.appendingPathComponent("favfs").path)
        XCTAssertEqual(caches.count, 1, "one cache dir: \(caches)")
        XCTAssertTrue(caches.first?.hasPrefix("dav-alice@127.0.0.1-\(s.port)") == true, "the cache dir is named after the URL: \(caches)")
        try assertLogHasNoSecret(cache.appendingPathComponent("favfs/\(caches[0])/favfs.log").path, also: [basic])

        // Command-line options reach the provider of a named remote (and a typo fails the mount).
        let bad = try MountedFavFS(remote: "nas")
        mounts.append(bad)
        try fails(["mount", bad.path, "--remote", "nas", "--cache-dir", bad.cacheDir.path, "--option", "bogus=1"],
                  saying: ["unknown option 'bogus'"], timeout: 90)
        XCTAssertFalse(bad.isMounted)
    }

    /// A URL with a password (the old way) mounts, but the daemon gets the password on stdin.
    func testPasswordInURLStaysOutOfTheDaemonsArgv() throws {
        let s = try davServer()
        let m = try MountedFavFS(remote: "")
        mounts.append(m)
        let ascii = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        let encoded = Self.secret.addingPercentEncoding(withAllowedCharacters: ascii)!
        try ok(["mount", m.path, "--remote", "dav://\(Self.user):\(encoded)@127.0.0.1:\(s.port)/files/", "--cache-dir", m.cacheDir.path], timeout: 90)
        XCTAssertEqual(try TimedProcess.sh("cat \(shq(m.path + "/hello.txt"))", timeout: 60).stdout, "hello over dav\n")
        try assertNoSecret(in: m, also: [encoded])
    }

    func assertNoSecret(in m: MountedFavFS, also others: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let pids = MountedFavFS.processes(mentioning: m.path)
        XCTAssertFalse(pids.isEmpty, "no daemon found for \(m.path)", file: file, line: line)
        for pid in pids {
            let cmdline = String(decoding: FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data(), as: UTF8.self)
            for secret in [Self.secret, "s3cret"] + others {
                XCTAssertFalse(cmdline.contains(secret), "the secret shows in the command line of pid \(pid): \(cmdline)", file: file, line: line)
            }
            XCTAssertTrue(cmdline.contains("--remote"), "pid \(pid): \(cmdline)", file: file, line: line)
        }
    }

    func assertLogHasNoSecret(_ path: String, also others: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let log = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertFalse(log.isEmpty, "empty log \(path)", file: file, line: line)
        for secret in [Self.secret, "s3cret"] + others {
            XCTAssertFalse(log.contains(secret), "the secret shows in \(path)", file: file, line: line)
        }
    }
}
