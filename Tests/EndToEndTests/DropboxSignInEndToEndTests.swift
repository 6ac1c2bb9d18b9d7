import Foundation
import TestSupport
import XCTest

/// `favfs remote add NAME dropbox:///… --option client_id=KEY` signs in (OAuth 2 authorization
/// code with PKCE) against the API fixture: in a "browser" (a fake `xdg-open` that follows the
/// consent page's redirect with curl, as a browser would) when there is a desktop, with a
/// pasted code when there is none. The refresh token it stores is the one a mount then uses.
/// Each test has its own XDG_CONFIG_HOME and XDG_CACHE_HOME.
final class DropboxSignInEndToEndTests: XCTestCase {
    var homes: SignInHomes!
    var servers: [DropboxServer] = []

    override func setUpWithError() throws {
        try E2EGate.require(apache: false)
        homes = try SignInHomes("dbxsignin")
    }

    override func tearDown() {
        homes?.remove()
        for s in servers { s.remove() }
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

    private func addArgs(_ s: DropboxServer, name: String = "box") -> [String] {
        ["remote", "add", name, "dropbox:///Work", "--option", "client_id=\(s.clientID)", "--option", "endpoint=\(s.endpoint)"]
    }

    func testWithADesktopTheBrowserSignsInAndTheStoredTokenMounts() throws {
        let s = try server()
        let r = try homes.favfs(addArgs(s), desktop: true, timeout: 90)
        XCTAssertTrue(r.succeeded, "\(r)\nbrowser: \(homes.browserErrors)")
        XCTAssertTrue(r.stdout.contains("signed in to Dropbox: its refresh token is stored as the secret"), "\(r)")
        XCTAssertTrue(r.stderr.contains("/oauth2/authorize?client_id=\(s.clientID)&response_type=code&token_access_type=offline&code_challenge="), "\(r)")
        XCTAssertTrue(r.stderr.contains("code_challenge_method=S256&redirect_uri=http%3A%2F%2F127.0.0.1%3A"), "\(r)")
        let page = homes.browserPage
        XCTAssertTrue(page.contains("You can close this tab"), "the browser's page: \(page)")
        XCTAssertTrue(homes.storedText().contains("fixture-issued-"), "the issued refresh token is the remote's secret")
        let mode = (try FileManager.default.attributesOfItem(atPath: homes.remotesFile)[.posixPermissions] as? NSNumber)?.intValue
        XCTAssertEqual(mode, 0o600)
        XCTAssertFalse(r.stdout.contains("fixture-issued-") || r.stderr.contains("fixture-issued-"), "the token is never printed: \(r)")
        XCTAssertEqual(try homes.mountAndList("box"), ["a.txt"])
        XCTAssertEqual(s.requests("/oauth2/token HTTP/1.1\" 200"), 2, "one code grant, one refresh at the mount: \(s.log())")
    }

    func testWithoutADesktopThePastedCodeSignsIn() throws {
        let s = try server()
        let fifo = homes.base.appendingPathComponent("stdin").path
        let out = homes.base.appendingPathComponent("add.out").path, err = homes.base.appendingPathComponent("add.err").path
        let command = (["/usr/bin/env", "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "XDG_CONFIG_HOME=\(homes.config.path)",
                        "XDG_CACHE_HOME=\(homes.cache.path)", FavFSBinary.path] + addArgs(s)).map(shq).joined(separator: " ")
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
        XCTAssertTrue(homes.storedText().contains("fixture-issued-"))
        let test = try homes.favfs(["remote", "test", "box"], desktop: false)
        XCTAssertTrue(test.succeeded, "the stored token works: \(test)")
    }

    func testADenialSaysSoAndStoresNothing() throws {
        let s = try server { $0.denyAuthorization = true }
        let r = try homes.favfs(addArgs(s), desktop: true, timeout: 90)
        XCTAssertNotEqual(r.status, 0, "\(r)")
        XCTAssertFalse(r.timedOut, "\(r)")
        XCTAssertTrue(r.stderr.contains("signing in to Dropbox was denied") && r.stderr.contains("nothing was stored"), "\(r)")
        XCTAssertEqual(r.status, 77, "denied is a permission problem: \(r)")
        XCTAssertFalse(homes.storedText().contains("box"), "nothing stored: \(homes.storedText())")
        let page = homes.browserPage
        XCTAssertTrue(page.contains("not signed in"), "the browser's page: \(page)")
    }

    /// Without a desktop and with no code to read (standard input at its end), nothing is stored.
    func testWithoutADesktopAnEndedInputStoresNothing() throws {
        let s = try server()
        let r = try homes.favfs(addArgs(s), desktop: false, stdin: "")
        XCTAssertEqual(r.status, 64, "\(r)")
        XCTAssertTrue(r.stderr.contains("standard input ended before a code was pasted; nothing was stored"), "\(r)")
        XCTAssertFalse(homes.storedText().contains("box"))
    }

    /// `--redirect-port`: the browser comes back to that port (the one registered for the app).
    func testTheRedirectPortIsTheOneAsked() throws {
        let s = try server()
        let port = try FreePort.next()
        let r = try homes.favfs(addArgs(s) + ["--redirect-port", String(port)], desktop: true, timeout: 90)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(r.stderr.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A\(port)%2F&"), "\(r)")
        XCTAssertTrue(homes.storedText().contains("fixture-issued-"))
    }

    /// A refresh token Dropbox refuses (revoked) fails the mount with the command that signs in again.
    func testARevokedTokenAtMountNamesTheCommandThatSignsInAgain() throws {
        let s = try server()
        XCTAssertTrue(try homes.favfs(addArgs(s) + ["--password-stdin"], desktop: false, stdin: "revoked-token\n").succeeded)
        let m = try homes.mountPoint(for: "box")
        let r = try homes.favfs(["mount", m.path, "--remote", "box", "--cache-dir", m.cacheDir.path], desktop: false, timeout: 90)
        XCTAssertNotEqual(r.status, 0, "\(r)")
        XCTAssertTrue(r.stderr.contains("favfs remote add box dropbox:///Work --option client_id=\(s.clientID)"), "\(r)")
        XCTAssertFalse(m.isMounted)
    }
}
