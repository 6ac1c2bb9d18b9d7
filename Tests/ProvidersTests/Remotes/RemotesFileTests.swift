import Foundation
@testable import Providers
import XCTest

/// Named remotes: edits, option precedence, redaction, and the file on disk (modes, refusal, atomic writes).
final class RemotesFileTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-remotes-\(UUID().uuidString.prefix(8))")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: dir)
        super.tearDown()
    }

    var store: RemotesStore { RemotesStore(path: dir.appendingPathComponent("favfs/remotes.toml").path) }

    func mode(_ path: String) -> mode_t {
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0, "stat \(path)")
        return st.st_mode & 0o777
    }

    // MARK: Edits

    func testAddRefusesDuplicatesUnlessReplacingAndKeepsOneDefault() throws {
        var f = RemotesFile()
        try f.add(StoredRemote(name: "a", url: "file:///a", isDefault: true), replacing: false)
        try f.add(StoredRemote(name: "b", url: "file:///b"), replacing: false)
        XCTAssertThrowsError(try f.add(StoredRemote(name: "a", url: "file:///other"), replacing: false)) {
            XCTAssertTrue("\($0)".contains("--force"), "\($0)")
        }
        try f.add(StoredRemote(name: "a", url: "file:///new"), replacing: true)
        XCTAssertEqual(f["a"]?.url, "file:///new")
        XCTAssertEqual(f.defaultRemote?.name, "a", "a replaced remote stays the default")
        try f.add(StoredRemote(name: "c", url: "file:///c", isDefault: true), replacing: false)
        XCTAssertEqual(f.remotes.filter(\.isDefault).map(\.name), ["c"])
        try f.setDefault("b")
        XCTAssertEqual(f.remotes.filter(\.isDefault).map(\.name), ["b"])
        XCTAssertThrowsError(try f.setDefault("zz")) { XCTAssertTrue("\($0)".contains("no remote named 'zz'"), "\($0)") }
        XCTAssertEqual(try f.remove("b").name, "b")
        XCTAssertNil(f.defaultRemote)
        XCTAssertThrowsError(try f.remove("b"))
        XCTAssertEqual(f.remotes.map(\.name), ["a", "c"], "order is kept")
    }

    func testNames() {
        for ok in ["nas", "a.b", "A-1_x", "..."] { XCTAssertTrue(StoredRemote.isValidName(ok), ok) }
        for bad in ["", "a b", "a/b", "dav://x", "ü", "a=b", "a#"] { XCTAssertFalse(StoredRemote.isValidName(bad), bad) }
        var f = RemotesFile()
        XCTAssertThrowsError(try f.add(StoredRemote(name: "a b", url: "file:///a"), replacing: false))
    }

    // MARK: Resolution

    func testOptionPrecedenceURLThenStoredThenCommandLine() throws {
        let f = RemotesFile(remotes: [StoredRemote(name: "s", url: "s3://bucket/p?region=url&endpoint=url&only_url=1",
                                                   isDefault: true, secret: "k",
                                                   options: ["region": "stored", "endpoint": "stored", "only_stored": "1"])])
        let c = try f.configuration(named: "s", overrides: ["endpoint": "cli", "only_cli": "1"])
        XCTAssertEqual(c.options, ["region": "stored", "endpoint": "cli", "only_url": "1", "only_stored": "1", "only_cli": "1"])
        XCTAssertEqual(c.secret, "k")
        XCTAssertEqual(c.password, "k")
        XCTAssertEqual(c.name, "s")
        XCTAssertEqual(try f.configuration(named: nil).name, "s", "no name: the default remote")
    }

    func testNoDefaultAndUnknownName() {
        let f = RemotesFile(remotes: [StoredRemote(name: "a", url: "file:///a")])
        XCTAssertThrowsError(try f.configuration(named: nil)) {
            XCTAssertEqual("\($0)", "no --remote given and no default remote: favfs remote add NAME URL --default")
        }
        XCTAssertThrowsError(try f.configuration(named: "b")) { XCTAssertTrue("\($0)".contains("known: a"), "\($0)") }
        XCTAssertThrowsError(try RemotesFile().configuration(named: "b")) { XCTAssertTrue("\($0)".contains("favfs remote add"), "\($0)") }
    }

    // MARK: Redaction

    func testRedaction() {
        XCTAssertEqual(StoredRemote.redactedURL("dav://u:pw@h:8080/p/"), "dav://u:***@h:8080/p/")
        XCTAssertEqual(StoredRemote.redactedURL("s3://b/p?region=x&session_token=abc"), "s3://b/p?region=x&session_token=***")
        let r = StoredRemote(name: "x", url: "s3://b", secret: "zz",
                             options: ["region": "eu", "key_passphrase": "p", "api_token": "t", "Password": "q", "secret_key": "s"])
        XCTAssertEqual(r.redactedOptions, "Password=***, api_token=***, key_passphrase=***, region=eu, secret_key=***")
    }

    // MARK: The file on disk

    func testMissingFileIsEmptyAndFirstWriteCreatesPrivateFileAndFolder() throws {
        XCTAssertEqual(try store.load(), RemotesFile())
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path), "load does not create the file")
        let old = umask(0)   // even with a permissive umask
        defer { umask(old) }
        try store.update { f throws(RemotesError) in try f.add(StoredRemote(name: "a", url: "file:///a", secret: "s\"\\é"), replacing: false) }
        XCTAssertEqual(mode(store.path), 0o600)
        XCTAssertEqual(mode((store.path as NSString).deletingLastPathComponent), 0o700)
        XCTAssertEqual(try store.load()["a"]?.secret, "s\"\\é")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: (store.path as NSString).deletingLastPathComponent)
        XCTAssertEqual(leftovers, ["remotes.toml"], "no temp files left behind")
    }

    func testRefusesAFileOthersCanRead() throws {
        try store.update { f throws(RemotesError) in try f.add(StoredRemote(name: "a", url: "file:///a"), replacing: false) }
        for m: mode_t in [0o644, 0o640, 0o604, 0o660, 0o602] {
            chmod(store.path, m)
            XCTAssertThrowsError(try store.load(), "mode \(String(m, radix: 8))") {
                let msg = "\($0)"
                XCTAssertTrue(msg.contains(store.path) && msg.contains("chmod 600 \(store.path)"), msg)
            }
            XCTAssertThrowsError(try store.update { _ throws(RemotesError) in }, "update with mode \(String(m, radix: 8))")
        }
        chmod(store.path, 0o400)
        XCTAssertNoThrow(try store.load())
    }

    func testRefusesAFileOwnedBySomeoneElse() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to give the file away")
        try store.update { f throws(RemotesError) in try f.add(StoredRemote(name: "a", url: "file:///a"), replacing: false) }
        XCTAssertEqual(chown(store.path, 65534, 65534), 0)
        XCTAssertThrowsError(try store.load()) { XCTAssertTrue("\($0)".contains("owned by uid 65534"), "\($0)") }
    }

    func testParseErrorNamesFileAndLine() throws {
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("favfs"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: store.path, contents: Data("[remotes.a]\nurl = \"x\"\nbogus\n".utf8),
                                       attributes: [.posixPermissions: 0o600])
        XCTAssertThrowsError(try store.load()) {
            XCTAssertTrue("\($0)".hasPrefix("\(store.path), line 3: "), "\($0)")
        }
    }

    func testReplacesAtomicallyKeepingThePrivateMode() throws {
        for i in 0..<5 {
            try store.update { f throws(RemotesError) in try f.add(StoredRemote(name: "r\(i)", url: "file:///\(i)"), replacing: false) }
            XCTAssertEqual(mode(store.path), 0o600)
        }
        XCTAssertEqual(try store.load().remotes.map(\.name), ["r0", "r1", "r2", "r3", "r4"])
    }

    func testDefaultPathFollowsXDG() {
        XCTAssertEqual(RemotesStore.defaultPath(environment: ["XDG_CONFIG_HOME": "/x/cfg"]), "/x/cfg/favfs/remotes.toml")
        let home = (NSHomeDirectory() as NSString).appendingPathComponent(".config/favfs/remotes.toml")
        XCTAssertEqual(RemotesStore.defaultPath(environment: [:]), home)
        XCTAssertEqual(RemotesStore.defaultPath(environment: ["XDG_CONFIG_HOME": "relative"]), home, "a relative XDG path is ignored")
    }
}
