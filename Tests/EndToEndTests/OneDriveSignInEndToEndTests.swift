import Foundation
import TestSupport
import XCTest

/// `favfs remote add NAME onedrive:///… --option client_id=ID` signs in to Microsoft against the
/// Graph fixture: in a "browser" (a fake `xdg-open` that follows the consent page's redirect to
/// http://localhost:PORT/ with curl) when there is a desktop, by device code when there is none
/// (the fixture approves after a few pending polls, or declines). The refresh token it stores
/// is the one a mount then uses. Each test has its own XDG_CONFIG_HOME and XDG_CACHE_HOME.
final class OneDriveSignInEndToEndTests: XCTestCase {
    var base: URL!
    var config: URL { base.appendingPathComponent("config") }
    var cache: URL { base.appendingPathComponent("cache") }
    var bin: URL { base.appendingPathComponent("bin") }
    var remotesFile: String { config.appendingPathComponent("favfs/remotes.toml").path }
    var servers: [OneDriveServer] = []
    var mounts: [MountedFavFS] = []

    override func setUpWithError() throws {
        try E2EGate.require(apache: false)
        base = URL(fileURLWithPath: "/tmp").appendingPathComponent("favfs-e2e-odsignin-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let opener = bin.appendingPathComponent("xdg-open")
        try "#!/bin/sh\nexec curl -sS -L --max-time 30 -o \(shq(base.appendingPathComponent("browser.html").path)) \"$1\" 2>>\(shq(base.appendingPathComponent("browser.err").path))\n"
            .write(to: opener, atomically: true, encoding: .utf8)
        chmod(opener.path, 0o755)
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        for s in servers { s.remove() }
        if let base { try? FileManager.default.removeItem(at: base) }
        super.tearDown()
    }

    private func server(_ configure: (inout OneDriveServer.Settings) -> Void = { _ in }) throws -> OneDriveServer {
        var settings = OneDriveServer.Settings()
        configure(&settings)
        let s = try OneDriveServer.started(settings)
        servers.append(s)
        try DirectorySeeding.seed(s.root, files: ["Documents/a.txt": Data("a\n".utf8)], folders: [])
        return s
    }

    /// favfs with this test's homes; `desktop`: DISPLAY set and the fake xdg-open first on PATH.
    private func favfs(_ args: [String], desktop: Bool, stdin: String? = nil, timeout: Double = 60) throws -> TimedProcess.Result {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        var env = ["-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "XDG_CONFIG_HOME=\(config.path)", "XDG_CACHE_HOME=\(cache.path)"]
        if desktop { env += ["DISPLAY=:99", "PATH=\(bin.path):\(path)"] }
        return try TimedProcess.run("/usr/bin/env", env + [FavFSBinary.path] + args, stdin: stdin, timeout: timeout)
    }

    private func addArgs(_ s: OneDriveServer, name: String = "od") -> [String] {
        ["remote", "add", name, "onedrive:///Documents", "--option", "client_id=\(s.clientID)", "--option", "endpoint=\(s.endpoint)"]
    }

    private func storedText() -> String { (try? String(contentsOfFile: remotesFile, encoding: .utf8)) ?? "" }

    /// Mounts the remote by name, lists it, unmounts.
    private func mountAndList(_ name: String) throws -> [String] {
        let m = try MountedFavFS(remote: name, cacheDir: cache.appendingPathComponent(name))
        mounts.append(m)
        let r = try favfs(["mount", m.path, "--remote", name, "--cache-dir", m.cacheDir.path], desktop: false, timeout: 90)
        guard r.succeeded, m.isMounted else { throw ShellError("mount \(name): \(r)") }
        let names = try FileManager.default.contentsOfDirectory(atPath: m.path).sorted()
        XCTAssertTrue(try favfs(["unmount", m.path], desktop: false).succeeded)
        return names
    }

    func testWithADesktopTheBrowserSignsInAndTheStoredTokenMounts() throws {
        let s = try server()
        let r = try favfs(addArgs(s), desktop: true, timeout: 90)
        XCTAssertTrue(r.succeeded, "\(r)\nbrowser: \((try? String(contentsOf: base.appendingPathComponent("browser.err"), encoding: .utf8)) ?? "")")
        XCTAssertTrue(r.stdout.contains("signed in to Microsoft: its refresh token is stored as the secret"), "\(r)")
        XCTAssertTrue(r.stderr.contains("/common/oauth2/v2.0/authorize?client_id=\(s.clientID)&response_type=code&scope=offline_access%20Files.ReadWrite&code_challenge="),
                      "\(r)")
        XCTAssertTrue(r.stderr.contains("code_challenge_method=S256&redirect_uri=http%3A%2F%2Flocalhost%3A"), "\(r)")
        let page = (try? String(contentsOf: base.appendingPathComponent("browser.html"), encoding: .utf8)) ?? ""
        XCTAssertTrue(page.contains("favfs is signed in to Microsoft"), "the browser's page: \(page)")
        XCTAssertTrue(storedText().contains("fixture-issued-"), "the issued refresh token is the remote's secret")
        XCTAssertFalse(r.stdout.contains("fixture-issued-") || r.stderr.contains("fixture-issued-"), "the token is never printed: \(r)")
        XCTAssertEqual(try mountAndList("od"), ["a.txt"])
        XCTAssertEqual(s.requests("/common/oauth2/v2.0/authorize?"), 1)
        XCTAssertEqual(s.requests("\"POST /common/oauth2/v2.0/token HTTP/1.1\" 200"), 2, "one code grant, one refresh at the mount: \(s.log())")
    }

    func testWithoutADesktopTheDeviceCodeSignsInAndTheStoredTokenWorks() throws {
        let s = try server()
        let r = try favfs(addArgs(s), desktop: false, stdin: "", timeout: 90)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(r.stderr.contains("no desktop"), "\(r)")
        XCTAssertTrue(r.stderr.contains("open the page \(s.endpoint)/devicelogin and enter the code "), "Microsoft's message is shown: \(r)")
        XCTAssertTrue(r.stdout.contains("signed in to Microsoft"), "\(r)")
        XCTAssertEqual(s.requests("/common/oauth2/v2.0/authorize"), 0, "no consent page without a desktop")
        XCTAssertEqual(s.requests("\"POST /common/oauth2/v2.0/token HTTP/1.1\" 400"), 2, "two pending polls: \(s.log())")
        XCTAssertTrue(storedText().contains("fixture-issued-"))
        let test = try favfs(["remote", "test", "od"], desktop: false)
        XCTAssertTrue(test.succeeded, "the stored token works: \(test)")
    }

    func testADenialInTheBrowserSaysSoAndStoresNothing() throws {
        let s = try server { $0.denyAuthorization = true }
        let r = try favfs(addArgs(s), desktop: true, timeout: 90)
        XCTAssertFalse(r.timedOut, "\(r)")
        XCTAssertEqual(r.status, 77, "denied is a permission problem: \(r)")
        XCTAssertTrue(r.stderr.contains("signing in to Microsoft was denied") && r.stderr.contains("nothing was stored"), "\(r)")
        XCTAssertFalse(storedText().contains("od"), "nothing stored: \(storedText())")
        let page = (try? String(contentsOf: base.appendingPathComponent("browser.html"), encoding: .utf8)) ?? ""
        XCTAssertTrue(page.contains("not signed in"), "the browser's page: \(page)")
    }

    func testADeclinedDeviceCodeSaysSoAndStoresNothing() throws {
        let s = try server { $0.deviceOutcome = .decline }
        let r = try favfs(addArgs(s), desktop: false, stdin: "", timeout: 90)
        XCTAssertEqual(r.status, 77, "\(r)")
        XCTAssertTrue(r.stderr.contains("signing in to Microsoft was denied: the sign-in was declined at \(s.endpoint)/devicelogin; nothing was stored"), "\(r)")
        XCTAssertFalse(storedText().contains("od"), "nothing stored: \(storedText())")
    }

    /// A device code that expires before it is entered is a temporary failure (75) that says so.
    func testAnExpiredDeviceCodeSaysSoAndStoresNothing() throws {
        let s = try server { $0.deviceOutcome = .expire; $0.devicePending = 0 }
        let r = try favfs(addArgs(s), desktop: false, stdin: "", timeout: 90)
        XCTAssertEqual(r.status, 75, "\(r)")
        XCTAssertTrue(r.stderr.contains("expired before it was entered at \(s.endpoint)/devicelogin; nothing was stored"), "\(r)")
        XCTAssertFalse(storedText().contains("od"), "nothing stored: \(storedText())")
    }

    /// `--redirect-port`: the browser comes back to http://localhost at that port.
    func testTheRedirectPortIsTheOneAsked() throws {
        let s = try server()
        let port = try FreePort.next()
        let r = try favfs(addArgs(s) + ["--redirect-port", String(port)], desktop: true, timeout: 90)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(r.stderr.contains("redirect_uri=http%3A%2F%2Flocalhost%3A\(port)%2F&"), "\(r)")
        XCTAssertTrue(storedText().contains("fixture-issued-"))
    }
}
