import Foundation
import TestSupport
import XCTest

/// `favfs remote add NAME dropbox:///… --option client_id=KEY` signs in (OAuth 2 authorization
/// code with PKCE) against the API fixture: in a "browser" (a fake `xdg-open` that follows the
/// consent page's redirect with curl, as a browser would) when there is a desktop, with a
/// pasted code when there is none. The refresh token it stores is the one a mount then uses.
/// Each test has its own XDG_CONFIG_HOME and XDG_CACHE_HOME.
final class DropboxSignInEndToEndTests: XCTestCase {
    var base: URL!
    var config: URL { base.appendingPathComponent("config") }
    var cache: URL { base.appendingPathComponent("cache") }
    var bin: URL { base.appendingPathComponent("bin") }
    var remotesFile: String { config.appendingPathComponent("favfs/remotes.toml").path }
    var servers: [DropboxServer] = []
    var mounts: [MountedFavFS] = []

    override func setUpWithError() throws {
        try E2EGate.require(apache: false)
        base = URL(fileURLWithPath: "/tmp").appendingPathComponent("favfs-e2e-dbxsignin-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        // The "browser": follows the consent page's redirect to favfs's loopback listener.
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

    private func server(_ configure: (inout DropboxServer.Settings) -> Void = { _ in }) throws -> DropboxServer {
        var settings = DropboxServer.Settings()
        configure(&settings)
        let s = try DropboxServer.started(settings)
        servers.append(s)
        try DirectorySeeding.seed(s.root, files: ["Work/a.txt": Data("a\n".utf8)], folders: [])
        return s
    }

    /// favfs with this test's homes; `desktop`: DISPLAY set and the fake xdg-open first on PATH.
    private func favfs(_ args: [String], desktop: Bool, stdin: String? = nil, timeout: Double = 60) throws -> TimedProcess.Result {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        var env = ["-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "XDG_CONFIG_HOME=\(config.path)", "XDG_CACHE_HOME=\(cache.path)"]
        if desktop { env += ["DISPLAY=:99", "PATH=\(bin.path):\(path)"] }
        return try TimedProcess.run("/usr/bin/env", env + [FavFSBinary.path] + args, stdin: stdin, timeout: timeout)
    }

    private func addArgs(_ s: DropboxServer, name: String = "box") -> [String] {
        ["remote", "add", name, "dropbox:///Work", "--option", "client_id=\(s.clientID)", "--option", "endpoint=\(s.endpoint)"]
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
        XCTAssertTrue(r.stdout.contains("signed in to Dropbox: its refresh token is stored as the secret"), "\(r)")
        XCTAssertTrue(r.stderr.contains("/oauth2/authorize?client_id=\(s.clientID)&response_type=code&token_access_type=offline&code_challenge="), "\(r)")
        XCTAssertTrue(r.stderr.contains("code_challenge_method=S256&redirect_uri=http%3A%2F%2F127.0.0.1%3A"), "\(r)")
        let page = (try? String(contentsOf: base.appendingPathComponent("browser.html"), encoding: .utf8)) ?? ""
        XCTAssertTrue(page.contains("You can close this tab"), "the browser's page: \(page)")
        XCTAssertTrue(storedText().contains("fixture-issued-"), "the issued refresh token is the remote's secret")
        let mode = (try FileManager.default.attributesOfItem(atPath: remotesFile)[.posixPermissions] as? NSNumber)?.intValue
        XCTAssertEqual(mode, 0o600)
        XCTAssertFalse(r.stdout.contains("fixture-issued-") || r.stderr.contains("fixture-issued-"), "the token is never printed: \(r)")
        XCTAssertEqual(try mountAndList("box"), ["a.txt"])
        XCTAssertEqual(s.requests("/oauth2/token HTTP/1.1\" 200"), 2, "one code grant, one refresh at the mount: \(s.log())")
    }

    func testWithoutADesktopThePastedCodeSignsIn() throws {
        let s = try server()
        let fifo = base.appendingPathComponent("stdin").path
        let out = base.appendingPathComponent("add.out").path, err = base.appendingPathComponent("add.err").path
        let command = (["/usr/bin/env", "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "XDG_CONFIG_HOME=\(config.path)",
                        "XDG_CACHE_HOME=\(cache.path)", FavFSBinary.path] + addArgs(s)).map(shq).joined(separator: " ")
        // The user: reads the address favfs prints, opens it (the page shows the code), pastes the code.
        let r = try TimedProcess.sh("""
            mkfifo \(shq(fifo))
            \(command) < \(shq(fifo)) > \(shq(out)) 2> \(shq(err)) &
            pid=$!
            exec 3> \(shq(fifo))
            for i in $(seq 100); do grep -q 'oauth2/authorize' \(shq(err)) && break; sleep 0.1; done
            url=$(grep -o 'http://[^ ]*oauth2/authorize[^ ]*' \(shq(err)) | head -1)
            case "$url" in *redirect_uri*) echo "redirect_uri without a desktop: $url"; exit 2;; esac
            code=$(curl -sS "$url" | sed -n 's/.*<code id="code">\\(.*\\)<\\/code>.*/\\1/p')
            echo "$code" >&3
            exec 3>&-
            wait $pid; echo "exit=$?"
            """, timeout: 90)
        let said = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "") + ((try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
        XCTAssertEqual(r.stdout, "exit=0\n", "\(r)\nfavfs said: \(said)")
        XCTAssertTrue(said.contains("paste the code"), said)
        XCTAssertTrue(storedText().contains("fixture-issued-"))
        let test = try favfs(["remote", "test", "box"], desktop: false)
        XCTAssertTrue(test.succeeded, "the stored token works: \(test)")
    }

    func testADenialSaysSoAndStoresNothing() throws {
        let s = try server { $0.denyAuthorization = true }
        let r = try favfs(addArgs(s), desktop: true, timeout: 90)
        XCTAssertNotEqual(r.status, 0, "\(r)")
        XCTAssertFalse(r.timedOut, "\(r)")
        XCTAssertTrue(r.stderr.contains("signing in to Dropbox was denied") && r.stderr.contains("nothing was stored"), "\(r)")
        XCTAssertEqual(r.status, 77, "denied is a permission problem: \(r)")
        XCTAssertFalse(storedText().contains("box"), "nothing stored: \(storedText())")
        let page = (try? String(contentsOf: base.appendingPathComponent("browser.html"), encoding: .utf8)) ?? ""
        XCTAssertTrue(page.contains("not signed in"), "the browser's page: \(page)")
    }

    /// Without a desktop and with no code to read (standard input at its end), nothing is stored.
    func testWithoutADesktopAnEndedInputStoresNothing() throws {
        let s = try server()
        let r = try favfs(addArgs(s), desktop: false, stdin: "")
        XCTAssertEqual(r.status, 64, "\(r)")
        XCTAssertTrue(r.stderr.contains("standard input ended before a code was pasted; nothing was stored"), "\(r)")
        XCTAssertFalse(storedText().contains("box"))
    }

    /// `--redirect-port`: the browser comes back to that port (the one registered for the app).
    func testTheRedirectPortIsTheOneAsked() throws {
        let s = try server()
        let port = try FreePort.next()
        let r = try favfs(addArgs(s) + ["--redirect-port", String(port)], desktop: true, timeout: 90)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(r.stderr.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A\(port)%2F&"), "\(r)")
        XCTAssertTrue(storedText().contains("fixture-issued-"))
    }

    /// A refresh token Dropbox refuses (revoked) fails the mount with the command that signs in again.
    func testARevokedTokenAtMountNamesTheCommandThatSignsInAgain() throws {
        let s = try server()
        XCTAssertTrue(try favfs(addArgs(s) + ["--password-stdin"], desktop: false, stdin: "revoked-token\n").succeeded)
        let m = try MountedFavFS(remote: "box", cacheDir: cache.appendingPathComponent("box"))
        mounts.append(m)
        let r = try favfs(["mount", m.path, "--remote", "box", "--cache-dir", m.cacheDir.path], desktop: false, timeout: 90)
        XCTAssertNotEqual(r.status, 0, "\(r)")
        XCTAssertTrue(r.stderr.contains("favfs remote add box dropbox:///Work --option client_id=\(s.clientID)"), "\(r)")
        XCTAssertFalse(m.isMounted)
    }
}
