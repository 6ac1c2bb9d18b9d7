import Foundation
import TestSupport
import XCTest

/// `favfs remote add NAME onedrive:///… --option client_id=ID` signs in to Microsoft against the
/// Graph fixture: in a "browser" (a fake `xdg-open` that follows the consent page's redirect to
/// http://localhost:PORT/ with curl) when there is a desktop, by device code when there is none
/// (the fixture approves after a few pending polls, or declines). The refresh token it stores
/// is the one a mount then uses. Each test has its own XDG_CONFIG_HOME and XDG_CACHE_HOME.
final class OneDriveSignInEndToEndTests: XCTestCase {
    var homes: SignInHomes!
    var servers: [OneDriveServer] = []

    override func setUpWithError() throws {
        try E2EGate.require(apache: false)
        homes = try SignInHomes("odsignin")
    }

    override func tearDown() {
        homes?.remove()
        for s in servers { s.remove() }
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

    private func addArgs(_ s: OneDriveServer, name: String = "od") -> [String] {
        ["remote", "add", name, "onedrive:///Documents", "--option", "client_id=\(s.clientID)", "--option", "endpoint=\(s.endpoint)"]
    }

    func testWithADesktopTheBrowserSignsInAndTheStoredTokenMounts() throws {
        let s = try server()
        let r = try homes.favfs(addArgs(s), desktop: true, timeout: 90)
        XCTAssertTrue(r.succeeded, "\(r)\nbrowser: \(homes.browserErrors)")
        XCTAssertTrue(r.stdout.contains("signed in to Microsoft: its refresh token is stored as the secret"), "\(r)")
        XCTAssertTrue(r.stderr.contains("/common/oauth2/v2.0/authorize?client_id=\(s.clientID)&response_type=code&scope=offline_access%20Files.ReadWrite&code_challenge="),
                      "\(r)")
        XCTAssertTrue(r.stderr.contains("code_challenge_method=S256&redirect_uri=http%3A%2F%2Flocalhost%3A"), "\(r)")
        let page = homes.browserPage
        XCTAssertTrue(page.contains("favfs is signed in to Microsoft"), "the browser's page: \(page)")
        XCTAssertTrue(homes.storedText().contains("fixture-issued-"), "the issued refresh token is the remote's secret")
        XCTAssertFalse(r.stdout.contains("fixture-issued-") || r.stderr.contains("fixture-issued-"), "the token is never printed: \(r)")
        XCTAssertEqual(try homes.mountAndList("od"), ["a.txt"])
        XCTAssertEqual(s.requests("/common/oauth2/v2.0/authorize?"), 1)
        XCTAssertEqual(s.requests("\"POST /common/oauth2/v2.0/token HTTP/1.1\" 200"), 2, "one code grant, one refresh at the mount: \(s.log())")
    }

    func testWithoutADesktopTheDeviceCodeSignsInAndTheStoredTokenWorks() throws {
        let s = try server()
        let r = try homes.favfs(addArgs(s), desktop: false, stdin: "", timeout: 90)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(r.stderr.contains("no desktop"), "\(r)")
        XCTAssertTrue(r.stderr.contains("open the page \(s.endpoint)/devicelogin and enter the code "), "Microsoft's message is shown: \(r)")
        XCTAssertTrue(r.stdout.contains("signed in to Microsoft"), "\(r)")
        XCTAssertEqual(s.requests("/common/oauth2/v2.0/authorize"), 0, "no consent page without a desktop")
        XCTAssertEqual(s.requests("\"POST /common/oauth2/v2.0/token HTTP/1.1\" 400"), 2, "two pending polls: \(s.log())")
        XCTAssertTrue(homes.storedText().contains("fixture-issued-"))
        let test = try homes.favfs(["remote", "test", "od"], desktop: false)
        XCTAssertTrue(test.succeeded, "the stored token works: \(test)")
    }

    func testADenialInTheBrowserSaysSoAndStoresNothing() throws {
        let s = try server { $0.denyAuthorization = true }
        let r = try homes.favfs(addArgs(s), desktop: true, timeout: 90)
        XCTAssertFalse(r.timedOut, "\(r)")
        XCTAssertEqual(r.status, 77, "denied is a permission problem: \(r)")
        XCTAssertTrue(r.stderr.contains("signing in to Microsoft was denied") && r.stderr.contains("nothing was stored"), "\(r)")
        XCTAssertFalse(homes.storedText().contains("od"), "nothing stored: \(homes.storedText())")
        let page = homes.browserPage
        XCTAssertTrue(page.contains("not signed in"), "the browser's page: \(page)")
    }

    func testADeclinedDeviceCodeSaysSoAndStoresNothing() throws {
        let s = try server { $0.deviceOutcome = .decline }
        let r = try homes.favfs(addArgs(s), desktop: false, stdin: "", timeout: 90)
        XCTAssertEqual(r.status, 77, "\(r)")
        XCTAssertTrue(r.stderr.contains("signing in to Microsoft was denied: the sign-in was declined at \(s.endpoint)/devicelogin; nothing was stored"), "\(r)")
        XCTAssertFalse(homes.storedText().contains("od"), "nothing stored: \(homes.storedText())")
    }

    /// A device code that expires before it is entered is a temporary failure (75) that says so.
    func testAnExpiredDeviceCodeSaysSoAndStoresNothing() throws {
        let s = try server { $0.deviceOutcome = .expire; $0.devicePending = 0 }
        let r = try homes.favfs(addArgs(s), desktop: false, stdin: "", timeout: 90)
        XCTAssertEqual(r.status, 75, "\(r)")
        XCTAssertTrue(r.stderr.contains("expired before it was entered at \(s.endpoint)/devicelogin; nothing was stored"), "\(r)")
        XCTAssertFalse(homes.storedText().contains("od"), "nothing stored: \(homes.storedText())")
    }

    /// `--redirect-port`: the browser comes back to http://localhost at that port.
    func testTheRedirectPortIsTheOneAsked() throws {
        let s = try server()
        let port = try FreePort.next()
        let r = try homes.favfs(addArgs(s) + ["--redirect-port", String(port)], desktop: true, timeout: 90)
        XCTAssertTrue(r.succeeded, "\(r)")
        XCTAssertTrue(r.stderr.contains("redirect_uri=http%3A%2F%2Flocalhost%3A\(port)%2F&"), "\(r)")
        XCTAssertTrue(homes.storedText().contains("fixture-issued-"))
    }
}
