import Foundation
import TestSupport
import XCTest

/// Every refusal of a command line says what went wrong and what to do (issue 25): a mistyped
/// command or option gets "did you mean", a bad value says what is expected, a typo in a URL is
/// pointed at, and the exit status is the documented one (docs/commands.md, "Exit statuses").
/// No mount and no server: each test runs the binary with its own empty XDG_CONFIG_HOME.
final class CommandLineMessagesTests: XCTestCase {
    private var base: URL!

    override func setUpWithError() throws {
        guard FavFSBinary.isAvailable else { throw XCTSkip("no favfs binary at \(FavFSBinary.path) (swift build --product favfs)") }
        base = URL(fileURLWithPath: "/tmp").appendingPathComponent("favfs-messages-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: base.appendingPathComponent("mnt"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: base.appendingPathComponent("config"), withIntermediateDirectories: true)
    }

    override func tearDown() {
        if let base { try? FileManager.default.removeItem(at: base) }
        super.tearDown()
    }

    private var mountPoint: String { base.appendingPathComponent("mnt").path }

    /// favfs with `args`, its remotes file in this test's folder.
    @discardableResult
    private func favfs(_ args: [String], stdin: String? = nil) throws -> TimedProcess.Result {
        try TimedProcess.run("/usr/bin/env", ["XDG_CONFIG_HOME=\(base.appendingPathComponent("config").path)", FavFSBinary.path] + args,
                             stdin: stdin, timeout: 60)
    }

    /// Asserts the exit status and that stderr holds `phrase`.
    @discardableResult
    private func refuses(_ args: [String], status: Int32, saying phrase: String,
                         file: StaticString = #filePath, line: UInt = #line) throws -> TimedProcess.Result {
        let r = try favfs(args)
        XCTAssertEqual(r.status, status, "favfs \(args.joined(separator: " ")): \(r)", file: file, line: line)
        XCTAssertTrue(r.stderr.contains(phrase), "favfs \(args.joined(separator: " ")): stderr lacks \"\(phrase)\": \(r)", file: file, line: line)
        return r
    }

    // 1. A mistyped command, at every level, and the usual other names of a command.
    func testAMistypedCommandSuggestsTheRightOne() throws {
        try refuses(["mout", mountPoint], status: 64, saying: "favfs: unknown command 'mout'. Did you mean 'mount'?")
        try refuses(["remote", "rm", "X"], status: 64, saying: "unknown command 'rm' after 'favfs remote'. Did you mean 'remove'?")
        try refuses(["remote", "ls"], status: 64, saying: "unknown command 'ls' after 'favfs remote'. Did you mean 'list'?")
        try refuses(["umount", mountPoint], status: 64, saying: "unknown command 'umount'. Did you mean 'unmount'?")
        try refuses(["remote", "tset", "nas"], status: 64, saying: "Did you mean 'test'?")
        // Nothing close: the commands are listed instead.
        try refuses(["xyzzy"], status: 64, saying: "unknown command 'xyzzy' (the commands: mount, unmount, status")
    }

    // 2. The first word is the mistake, whatever options follow it.
    func testAMistypedCommandIsNamedBeforeItsOptions() throws {
        let r = try refuses(["moutn", mountPoint, "--remote", "dav://127.0.0.1/"], status: 64,
                            saying: "favfs: unknown command 'moutn'. Did you mean 'mount'?")
        XCTAssertFalse(r.stderr.contains("Unknown option"), "\(r)")
    }

    // 3. An unknown option gets "did you mean" from that command's options.
    func testAnUnknownOptionSuggestsTheCommandsOwn() throws {
        try refuses(["mount", "--hepl"], status: 64, saying: "favfs: unknown option '--hepl'. Did you mean '--help'?")
        try refuses(["mount", mountPoint, "--remot", "dav://127.0.0.1/"], status: 64, saying: "unknown option '--remot'. Did you mean '--remote'?")
        try refuses(["remote", "add", "nas", "file:///tmp", "--defualt"], status: 64, saying: "Did you mean '--default'?")
        try refuses(["mount", mountPoint, "--no-such-thing"], status: 64, saying: "unknown option '--no-such-thing' for 'favfs mount' (see 'favfs mount --help')")
        // A good command line is not second-guessed.
        XCTAssertEqual(try favfs(["mount", "--help"]).status, 0)
        XCTAssertEqual(try favfs(["remote", "--json"]).status, 0)
        // Nor is the shell completion's call back (`---completion`).
        let completion = try favfs(["---completion", "mount", "--", "--remote", "1", "0", "favfs", "mount", "/tmp", "--remote", ""])
        XCTAssertEqual(completion.status, 0, "\(completion)")
    }

    // 4. A negative number of seconds is a value, and a wrong one.
    func testANegativeTimeoutSaysWhatIsExpected() throws {
        for args in [["--timeout", "-3"], ["--timeout=-3"]] {
            let r = try refuses(["mount", mountPoint] + args, status: 64, saying: "--timeout -3: give a number of seconds ≥ 0")
            XCTAssertFalse(r.stderr.contains("Missing value"), "\(r)")
        }
        try refuses(["mount", mountPoint, "--poll-interval", "-1"], status: 64, saying: "--poll-interval -1: give a number of seconds ≥ 0")
        try refuses(["mount", mountPoint, "--timeout", "soon"], status: 64, saying: "--timeout 'soon': give a number of seconds ≥ 0")
        try refuses(["mount", mountPoint, "--uid", "-1"], status: 64, saying: "--uid '-1': give a user id")
        try refuses(["status", "--watch", "--interval", "-1"], status: 64, saying: "--interval -1: give a number of seconds > 0")
        try refuses(["mount", mountPoint, "--fsync", "server"], status: 64, saying: "--fsync: 'server' is neither local nor remote")
    }

    // 5. A --remote that is no remote's name but a URL with a typo.
    func testAMistypedURLIsPointedAt() throws {
        try refuses(["mount", mountPoint, "--remote", "dav//host/"], status: 65,
                    saying: "no remote named 'dav//host/' (none is configured: favfs remote add NAME URL); it is not a URL either: did you mean 'dav://host/'?")
        try refuses(["mount", mountPoint, "--remote", "http:/host/a"], status: 65, saying: "did you mean 'http://host/a'?")
        try refuses(["remote", "test", "sftp:host"], status: 65, saying: "did you mean 'sftp://host'?")
        try refuses(["mount", mountPoint, "--remote", "nas/files"], status: 65, saying: "it is not a URL either: a URL starts with its scheme")
        // A plain name stays a configuration matter.
        let r = try refuses(["mount", mountPoint, "--remote", "nas"], status: 78, saying: "no remote named 'nas'")
        XCTAssertFalse(r.stderr.contains("not a URL"), "\(r)")
    }

    // 6. status of a path that does not exist fails, and says so; the JSON form too.
    func testStatusOfAMissingPathFails() throws {
        let missing = base.appendingPathComponent("nope").path
        try refuses(["status", missing], status: 64, saying: "favfs: \(missing): no such file or folder")
        try refuses(["status", mountPoint], status: 64, saying: "\(mountPoint) is not inside a favfs mount")
        let json = try favfs(["status", "--json", missing])
        XCTAssertEqual(json.status, 64, "\(json)")
        let items = (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["items"] as? [[String: Any]]
        XCTAssertEqual(items?.first?["state"] as? String, "no such file or folder", json.stdout)
    }

    // 7. Counts are singular for one: at run time where no mount is needed, and in the sources.
    func testCountsAreSingularForOne() throws {
        let folder = base.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: folder.appendingPathComponent("one.txt"))
        let r = try favfs(["remote", "test", "file://" + folder.path])
        XCTAssertEqual(r.status, 0, "\(r)")
        XCTAssertTrue(r.stdout.contains(": 1 item\n") || r.stdout.contains(": 1 item "), "\(r)")

        // Messages made elsewhere (a mount's status, unmount, the journal) go through Plural:
        // no string literal in Sources/favfs puts a counted value before a plural noun, or "(s)"
        // (but "http(s)://").
        let sources = FavFSBinary.packageRoot.appendingPathComponent("Sources/favfs")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        XCTAssertFalse(files.isEmpty, "no Swift files under \(sources.path)")
        let counted = try NSRegularExpression(pattern: #"\\\([^()]*\) (cached )?(files|items|uploads|names|remotes)\b|\w\(s\)(?!:)"#)
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.components(separatedBy: "\n").enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"), code.contains("\"") else { continue }
                let range = NSRange(code.startIndex..., in: code)
                XCTAssertNil(counted.firstMatch(in: code, range: range),
                             "Sources/favfs/\(file):\(number + 1): a count with a fixed plural (use Plural.count): \(code)")
            }
        }
    }

    // 8. A mistyped provider option is refused when the remote is added (or tested), not at mount.
    func testAnUnknownRemoteOptionIsRefusedWhenAdded() throws {
        try refuses(["remote", "add", "data", "s3://bucket/prefix", "--option", "regoin=x"], status: 65,
                    saying: "unknown option 'regoin' for an S3 remote; did you mean 'region'?")
        try refuses(["remote", "add", "data", "s3://bucket/prefix?regoin=x"], status: 65, saying: "did you mean 'region'?")
        try refuses(["remote", "test", "s3://bucket/prefix", "--option", "regoin=x"], status: 65,
                    saying: "unknown option 'regoin' for an S3 remote; did you mean 'region'?")
        try refuses(["remote", "add", "ref", "file:///tmp", "--option", "x=1"], status: 65,
                    saying: "unknown option 'x' for a local (file://) remote (it takes no options)")
        // Nothing was stored.
        let list = try favfs(["remote", "list"])
        XCTAssertTrue(list.stdout.contains("no remotes"), "\(list)")
        // A known option is accepted.
        XCTAssertEqual(try favfs(["remote", "add", "data", "s3://bucket/prefix", "--option", "region=eu-west-1"]).status, 0)
    }

    // 9. A password inside the URL is a usage error that says how to give it.
    func testAPasswordInTheURLIsAUsageError() throws {
        let r = try refuses(["remote", "add", "nas", "dav://me:secret@127.0.0.1/files/"], status: 64,
                            saying: "give the URL without it (dav://me@127.0.0.1/files/) and the password on standard input with --password-stdin")
        XCTAssertFalse(r.stderr.contains("secret@"), "the message repeats the password: \(r)")
    }
}
