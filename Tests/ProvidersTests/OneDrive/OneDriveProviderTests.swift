import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// What the OneDrive provider does beyond the conformance suite, against the Graph fixture
/// (each test starts its own, set up for what it checks): listing pages, reads pinned to a
/// version, If-Match conflicts, upload sessions, names, delta, throttling and sign-in.
final class OneDriveProviderTests: XCTestCase {
    private func server(_ configure: (inout OneDriveServer.Settings) -> Void = { _ in }) throws -> OneDriveServer {
        var settings = OneDriveServer.Settings()
        configure(&settings)
        let s = try OneDriveServer.started(settings)
        addTeardownBlock { s.remove() }
        return s
    }

    /// The provider as `favfs mount` makes it (URL, options, secret).
    private func provider(_ s: OneDriveServer, url: String = "onedrive:///", secret: String? = nil,
                          options: [String: String] = [:]) throws -> any WritableProvider {
        let p = try ProviderFactory.make(RemoteConfiguration(url: RemoteURL(url),
                                                             options: ["client_id": s.clientID, "endpoint": s.endpoint].merging(options) { _, new in new },
                                                             secret: secret ?? s.refreshToken))
        return try XCTUnwrap(p as? any WritableProvider)
    }

    private func direct(_ s: OneDriveServer, _ configure: (inout OneDriveProvider.Configuration) -> Void) -> OneDriveProvider {
        var c = OneDriveProvider.Configuration(endpoints: OneDriveEndpoints(base: s.endpoint), clientID: s.clientID,
                                               refreshToken: s.refreshToken, remoteDescription: "onedrive:///")
        configure(&c)
        return OneDriveProvider(configuration: c, transport: CurlTransport())
    }

    private func seed(_ s: OneDriveServer, _ files: [String: Data], folders: [String] = []) throws {
        try DirectorySeeding.seed(s.root, files: files, folders: folders)
    }

    private func expect(_ kind: ProviderError.Kind, _ what: String, _ body: () async throws -> Void) async -> ProviderError? {
        do {
            try await body()
            XCTFail("\(what): succeeded, expected \(kind)")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, kind, "\(what): \(e)")
            return e
        } catch {
            XCTFail("\(what): \(error)")
        }
        return nil
    }

    private func lines(_ s: OneDriveServer, _ fragment: String) -> Int {
        s.log().components(separatedBy: "\n").filter { $0.contains(fragment) }.count
    }

    private func source(_ data: Data) throws -> (ContentSource, () -> Void) {
        let path = NSTemporaryDirectory() + "favfs-onedrive-up-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ShellError("open \(path)") }
        return (ContentSource(fd: fd, length: Int64(data.count)), { close(fd); unlink(path) })
    }

    // MARK: listing and reading

    /// `$top` pages joined through `@odata.nextLink`: every entry once, folders as folders.
    func testListingFollowsNextLinksAcrossPages() async throws {
        let s = try server()
        var files: [String: Data] = [:]
        for i in 0..<7 { files["Docs/f\(i).txt"] = Data(repeating: UInt8(i), count: i) }
        try seed(s, files, folders: ["Docs/sub"])
        let p = try provider(s, url: "onedrive:///Docs", options: ["page_size": "3"])
        var pages = 0
        var items: [Item] = []
        var page: Page?
        repeat {
            let listed = try await p.enumerateItems(in: .rootContainer, page: page)
            items += listed.items
            page = listed.nextPage
            pages += 1
        } while page != nil && pages < 10
        XCTAssertEqual(pages, 3, "8 entries at 3 a page")
        XCTAssertEqual(items.map(\.name).sorted(), (0..<7).map { "f\($0).txt" } + ["sub"])
        XCTAssertEqual(items.first { $0.name == "f5.txt" }?.size, 5)
        XCTAssertEqual(items.first { $0.name == "sub" }?.kind, .folder)
        XCTAssertEqual(lines(s, "$skiptoken="), 2, s.log())
    }

    /// A ranged read goes through the redirect to the download URL (without Authorization:
    /// the fixture refuses it there) and is pinned to the cTag it was asked for: once the file
    /// changed, the old version is `.versionChanged`, and the new one reads the new bytes.
    func testRangedReadsArePinnedToTheirVersion() async throws {
        let s = try server()
        try seed(s, ["f.bin": Data(repeating: 1, count: 10_000)])
        let p = try provider(s)
        let old = try await p.item(for: ItemIdentifier("/f.bin"))
        let first = try await Conformance.read(p, old, 100..<300)
        XCTAssertEqual(first, Data(repeating: 1, count: 200))
        let second = try await Conformance.read(p, old, 5_000..<6_000)
        XCTAssertEqual(second, Data(repeating: 1, count: 1_000))
        XCTAssertEqual(lines(s, "GET /download/"), 2, s.log())
        XCTAssertEqual(lines(s, ":/content HTTP"), 1, "the download URL is reused for the version's next range: \(s.log())")
        XCTAssertTrue(s.log().contains("\" 206 "), s.log())
        try DirectorySeeding.overwrite(s.root, "f.bin", with: Data(repeating: 2, count: 10_000))
        _ = await expect(.versionChanged, "reading the old version") { _ = try await Conformance.read(p, old, 300..<400) }
        let new = try await p.item(for: ItemIdentifier("/f.bin"))
        XCTAssertNotEqual(new.version, old.version)
        let fresh = try await Conformance.read(p, new, 300..<400)
        XCTAssertEqual(fresh, Data(repeating: 2, count: 100))
    }

    // MARK: writing

    /// If-Match against a file changed meanwhile: `.versionChanged` (the core's conflict copy),
    /// and the file keeps the other writer's bytes; a new file over an existing one is `.exists`,
    /// names compared without case.
    func testAnUploadOverAChangedVersionIsVersionChanged() async throws {
        let s = try server()
        try seed(s, ["doc.txt": Data("base".utf8)])
        let p = try provider(s)
        let base = try await p.item(for: ItemIdentifier("/doc.txt"))
        try DirectorySeeding.overwrite(s.root, "doc.txt", with: Data("theirs!".utf8))
        let (src, done) = try source(Data("mine".utf8))
        defer { done() }
        let e = await expect(.versionChanged, "replacing a changed version") {
            _ = try await p.upload(base.identifier, from: src, precondition: .mustMatch(try XCTUnwrap(base.version)))
        }
        XCTAssertEqual(e?.status, 412)
        XCTAssertTrue(e?.detail.contains("changed on OneDrive") ?? false, "\(String(describing: e))")
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("doc.txt")), Data("theirs!".utf8))
        let e2 = await expect(.exists, "creating DOC.TXT beside doc.txt") {
            _ = try await p.upload(ItemIdentifier("/DOC.TXT"), from: src, precondition: .mustNotExist)
        }
        XCTAssertTrue(e2?.detail.contains("nameAlreadyExists") ?? false, "\(String(describing: e2))")
        let current = try await p.item(for: ItemIdentifier("/doc.txt"))
        let replaced = try await p.upload(current.identifier, from: src, precondition: .mustMatch(try XCTUnwrap(current.version)))
        XCTAssertEqual(replaced.size, 4)
        XCTAssertNotEqual(replaced.version, current.version)
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("doc.txt")), Data("mine".utf8))
    }

    /// Above the threshold an upload goes up in an upload session, in fragments that are
    /// multiples of 320 KiB (a size that is not is rounded down), the last one the rest; the
    /// result is whole, and If-Match is still checked for a session.
    func testLargeUploadsGoUpInFragmentsOf320KiBMultiples() async throws {
        let s = try server()
        // 1,000,000 is not a multiple of 320 KiB: fragments of 983,040 bytes (3 × 320 KiB).
        let p = direct(s) { $0.sessionThreshold = 1 << 20; $0.sessionFragmentSize = 1_000_000 }
        let data = Data((0..<2_500_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        let (src, done) = try source(data)
        defer { done() }
        let made = try await p.upload(ItemIdentifier("/big.bin"), from: src, precondition: .mustNotExist)
        XCTAssertEqual(made.size, Int64(data.count))
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("big.bin")), data)
        XCTAssertEqual(lines(s, "createUploadSession"), 1, s.log())
        XCTAssertEqual(lines(s, "PUT /upload/"), 3, "2,500,000 bytes: 983,040 + 983,040 + 533,920")
        XCTAssertEqual(lines(s, "PUT /upload/") - lines(s, "\" 400 "), 3, "no fragment was refused: \(s.log())")

        try DirectorySeeding.overwrite(s.root, "big.bin", with: Data("theirs".utf8))
        _ = await expect(.versionChanged, "a session replacing a changed version") {
            _ = try await p.upload(made.identifier, from: src, precondition: .mustMatch(try XCTUnwrap(made.version)))
        }
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("big.bin")), Data("theirs".utf8))
    }

    /// A fragment lost on the way (500) is resumed from where the session says: the file is
    /// whole, and the session was asked once.
    func testALostFragmentIsResumedFromWhereTheSessionSays() async throws {
        let s = try server()
        let p = direct(s) { $0.sessionThreshold = 1 << 20; $0.sessionFragmentSize = 2 * OneDriveProvider.fragmentUnit }
        let data = Data((0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) })
        let (src, done) = try source(data)
        defer { done() }
        try s.loseFragments(1)
        let made = try await p.upload(ItemIdentifier("/resumed.bin"), from: src, precondition: .mustNotExist)
        XCTAssertEqual(made.size, Int64(data.count))
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("resumed.bin")), data)
        XCTAssertEqual(lines(s, "\" 500 "), 1, s.log())
        XCTAssertEqual(lines(s, "GET /upload/"), 1, s.log())
    }

    /// Names OneDrive refuses are `.invalidName` (EINVAL) before anything is sent, and a path
    /// past 400 characters `.nameTooLong`; nothing reaches the fixture or its disk.
    func testNamesOneDriveRefusesAreRefusedBeforeWriting() async throws {
        let s = try server()
        let p = try provider(s)
        let refused = ["co:lon", "what?", "a*b", "quote\"", "less<", "more>", "pipe|", "back\\slash", " leading", "trailing ",
                       "dot.", "CON", "nul", "Com1", "LPT9", ".lock", "Desktop.ini", "~$report.docx", "a_vti_b"]
        for name in refused {
            XCTAssertEqual(p.storageProblem(ItemIdentifier("/" + name), kind: .file)?.kind, .invalidName, name)
        }
        for name in ["a b", "ünïcödé ☃", "#hash", "100%", "con.txt", "x~$", "trailing dots...x"] {
            XCTAssertNil(p.storageProblem(ItemIdentifier("/" + name), kind: .file), name)
        }
        let long = ItemIdentifier("/" + (0..<5).map { _ in String(repeating: "d", count: 80) }.joined(separator: "/") + "/f")
        XCTAssertEqual(p.storageProblem(long, kind: .file)?.kind, .nameTooLong)
        let (src, done) = try source(Data("x".utf8))
        defer { done() }
        let before = lines(s, "HTTP/1.1")
        _ = await expect(.invalidName, "uploading co:lon") { _ = try await p.upload(ItemIdentifier("/co:lon"), from: src, precondition: .mustNotExist) }
        _ = await expect(.invalidName, "making the folder CON") { _ = try await p.createFolder(ItemIdentifier("/CON")) }
        XCTAssertEqual(lines(s, "HTTP/1.1"), before, "a refused name was sent: \(s.log())")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: s.root.path), [])
    }

    /// fileSystemInfo's time is set and listed back; the content's version (cTag) stays.
    func testModifiedTimesAreKeptWithoutANewContentVersion() async throws {
        let s = try server()
        try seed(s, ["t.txt": Data("t".utf8)])
        let p = try provider(s)
        let before = try await p.item(for: ItemIdentifier("/t.txt"))
        let set = try await p.setModified(ItemIdentifier("/t.txt"), to: Timestamp(seconds: 1_600_000_000, nanoseconds: 123_456_789))
        XCTAssertEqual(set.modifiedTime, Timestamp(seconds: 1_600_000_000))
        XCTAssertEqual(set.version, before.version)
        let listed = try await p.enumerateAll(in: .rootContainer).first { $0.name == "t.txt" }
        XCTAssertEqual(listed?.modifiedTime, Timestamp(seconds: 1_600_000_000))
        XCTAssertEqual(listed?.version, before.version)
    }

    /// Graph's copy: 202 and a monitor polled until completed; never over an existing item.
    func testServerSideCopyWaitsForTheMonitorAndNeverReplaces() async throws {
        let s = try server()
        try seed(s, ["a.txt": Data("A".utf8), "b.txt": Data("B".utf8)], folders: ["sub"])
        let p = try XCTUnwrap(try provider(s) as? OneDriveProvider)
        let a = try await p.item(for: ItemIdentifier("/a.txt"))
        let copy = try await p.copyItem(a, to: ItemIdentifier("/sub/copy.txt"))
        XCTAssertEqual(copy.size, 1)
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("sub/copy.txt")), Data("A".utf8))
        XCTAssertEqual(lines(s, "GET /monitor/"), 2, "inProgress, then completed: \(s.log())")
        _ = await expect(.exists, "copying over b.txt") { _ = try await p.copyItem(a, to: ItemIdentifier("/b.txt")) }
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("b.txt")), Data("B".utf8))
        let quota = try await p.quota()
        XCTAssertEqual(quota?.usedBytes, 3)
        XCTAssertEqual(quota?.totalBytes, 1 << 40)
    }

    // MARK: changes

    /// Previews come from `thumbnails/0/c128x128/content` through its pre-authenticated URL
    /// (`PreviewChecks`).
    func testThumbnailsAreOneDrivesPreviews() async throws {
        let s = try server()
        let p = try XCTUnwrap(try provider(s) as? any ThumbnailProvider)
        try await PreviewChecks.check(p, served: s.root, downloads: { s.log().components(separatedBy: "/download/").count - 1 })
    }

    /// delta, polled by the watcher, names the folder where a file was added on disk and the
    /// one a file was deleted from, without a listing.
    func testDeltaReportsFoldersChangedOnTheServer() async throws {
        let s = try server()
        try seed(s, ["top.txt": Data("t".utf8), "sub/a.txt": Data("a".utf8)], folders: ["sub", "other"])
        let p = direct(s) { $0.deltaInterval = 0.3 }
        _ = try await p.item(for: .rootContainer)
        _ = try await p.enumerateAll(in: .rootContainer)
        _ = try await p.enumerateAll(in: ItemIdentifier("/sub"))
        let reported = Reported()
        p.startWatching { reported.add($0) }
        let started = await wait(5) { p.watcher.completedRounds >= 1 }
        XCTAssertTrue(started, "the first delta round did not happen: \(s.log())")
        try seed(s, ["sub/new.txt": Data("new".utf8)])
        try FileManager.default.removeItem(at: s.root.appendingPathComponent("top.txt"))
        let seen = await wait(5) { reported.all.isSuperset(of: [ItemIdentifier("/sub"), .rootContainer]) }
        XCTAssertTrue(seen, "reported \(reported.all): \(s.log())")
        XCTAssertFalse(reported.all.contains(ItemIdentifier("/other")), "\(reported.all)")
        XCTAssertTrue(s.log().contains("delta?token=latest"), s.log())
        p.watcher.stop()
        let rounds = p.watcher.completedRounds
        try await Task.sleep(nanoseconds: 1_000_000_000)
        XCTAssertLessThanOrEqual(p.watcher.completedRounds, rounds + 1, "the watcher goes on after stop()")
    }

    /// 410 resyncRequired: the root and the folders listed are reported, and delta starts
    /// again from the latest state.
    func testResyncRequiredReportsTheRootAndStartsAgain() async throws {
        let s = try server()
        try seed(s, ["sub/a.txt": Data("a".utf8)], folders: ["sub"])
        let p = direct(s) { $0.deltaInterval = 0 }
        _ = try await p.item(for: .rootContainer)
        _ = try await p.enumerateAll(in: .rootContainer)
        _ = try await p.enumerateAll(in: ItemIdentifier("/sub"))
        let first = try await p.changedFolders()
        XCTAssertEqual(first, [])
        try s.requireResync()
        let resynced = try await p.changedFolders()
        XCTAssertEqual(resynced, [.rootContainer, ItemIdentifier("/sub")], "the root and the folder the listing named")
        XCTAssertTrue(s.log().contains("\" 410 "), s.log())
        let latest = try await p.changedFolders()
        XCTAssertEqual(latest, [], "after a resync: the latest state again")
        try seed(s, ["sub/b.txt": Data("b".utf8)])
        // The folder changed too (its tag), so its parent is named as well, as at Graph.
        let changed = try await p.changedFolders()
        XCTAssertTrue(changed.contains(ItemIdentifier("/sub")), "\(changed)")
    }

    /// A remote rooted in a folder of the drive: delta names that folder too (its tag changes
    /// with its children) under a parent the mount never saw; it must not make the mount
    /// forget where the folders below it are.
    func testDeltaBelowARootFolderKeepsFindingItsFolders() async throws {
        let s = try server()
        try seed(s, ["Docs/sub/a.txt": Data("a".utf8)], folders: ["Docs/sub"])
        let p = direct(s) { $0.deltaInterval = 0; $0.rootFolder = "/Docs" }
        _ = try await p.item(for: .rootContainer)
        _ = try await p.enumerateAll(in: .rootContainer)
        _ = try await p.enumerateAll(in: ItemIdentifier("/sub"))
        _ = try await p.changedFolders()
        for round in 0..<3 {
            // A new name in the root folder changes its tag; one in sub must still be told.
            try seed(s, ["Docs/top\(round).txt": Data("t".utf8), "Docs/sub/new\(round).txt": Data("n".utf8)])
            let changed = try await p.changedFolders()
            XCTAssertEqual(changed, [.rootContainer, ItemIdentifier("/sub")], "round \(round)")
        }
    }

    // MARK: throttling and sign-in

    /// 429 with Retry-After: waited out, then the call succeeds; past the budget, `.serverError`
    /// saying it was throttled, without waiting longer than the budget.
    func testThrottledAnswersAreWaitedOutWithinABound() async throws {
        let s = try server()
        try seed(s, ["a.txt": Data("abc".utf8)])
        let p = try provider(s)
        _ = try await p.item(for: ItemIdentifier("/a.txt"))
        try s.throttle(2, retryAfter: 1)
        let started = Date()
        let item = try await p.item(for: ItemIdentifier("/a.txt"))
        XCTAssertEqual(item.size, 3)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 1.9, "Retry-After: 1 twice was not waited out")
        XCTAssertEqual(lines(s, "\" 429 "), 2)

        let bounded = direct(s) { $0.retryBudget = 2.5 }
        try s.throttle(10, retryAfter: 2)
        let again = Date()
        let e = await expect(.serverError, "a call throttled past its budget") { _ = try await bounded.item(for: ItemIdentifier("/a.txt")) }
        XCTAssertTrue(e?.detail.contains("throttling") ?? false, "\(String(describing: e))")
        XCTAssertTrue(e?.detail.contains("activityLimitReached") ?? false, "\(String(describing: e))")
        XCTAssertLessThan(Date().timeIntervalSince(again), 4.5)
    }

    /// A token that runs out before the client expected is answered 401: the call gets a new
    /// token and succeeds; a burst of calls shares one fetch.
    func testAnExpiredAccessTokenIsReplacedWithoutFailingTheCall() async throws {
        let s = try server { $0.tokenLifetime = 2; $0.statedLifetime = 3600 }
        try seed(s, ["a.txt": Data("a".utf8)])
        let p = try XCTUnwrap(try provider(s) as? OneDriveProvider)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { _ = try await p.item(for: ItemIdentifier("/a.txt")) } }
            try await group.waitForAll()
        }
        XCTAssertEqual(p.accessTokensFetched, 1)
        try await Task.sleep(nanoseconds: 2_500_000_000)
        let again = try await p.item(for: ItemIdentifier("/a.txt"))
        XCTAssertEqual(again.size, 1)
        XCTAssertEqual(p.accessTokensFetched, 2, "one new token after the expiry")
        XCTAssertEqual(lines(s, "\" 401 "), 1, "the expired token was refused once: \(s.log())")
    }

    /// A refresh token Microsoft does not take is `.denied`, naming the command that signs in again;
    /// an unknown client id names client_id. The mount's first call (the root's item) fails.
    func testAWrongRefreshTokenSaysToAddTheRemoteAgain() async throws {
        let s = try server()
        let p = try provider(s, secret: "revoked-refresh-token")
        let e = await expect(.denied, "the root with a wrong refresh token") { _ = try await p.item(for: .rootContainer) }
        XCTAssertTrue(e?.detail.contains("invalid_grant") ?? false, "\(String(describing: e))")
        XCTAssertTrue(e?.detail.contains("sign in again (favfs remote add NAME URL --option client_id=ID --force") ?? false, "\(String(describing: e))")
        XCTAssertEqual(e?.status, 400)
        let other = try provider(s, options: ["client_id": "another-app"])
        let e2 = await expect(.denied, "another app's client id") { _ = try await other.item(for: .rootContainer) }
        XCTAssertTrue(e2?.detail.contains("client_id") ?? false, "\(String(describing: e2))")
        let root = try await provider(s).item(for: .rootContainer)
        XCTAssertEqual(root.kind, .folder)
    }

    /// URL and options: the host is refused, client_id is required, endpoint must be a URL,
    /// page_size a number; paths and times as Graph spells them.
    func testRemoteURLsOptionsPathsAndTimes() throws {
        XCTAssertEqual(try RemoteURL("onedrive:///Documents/2024").kind, .onedrive)
        XCTAssertThrowsError(try RemoteURL("onedrive://host/x"))
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("onedrive:///"), secret: "t"))) { error in
            XCTAssertTrue("\(error)".contains("client_id"), "\(error)")
        }
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("onedrive:///"), options: ["client_id": "k", "endpoint": "ftp://x"], secret: "t")))
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("onedrive:///"), options: ["client_id": "k", "page_size": "0"], secret: "t")))
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("onedrive:///"), options: ["client_id": "k"])))
        let paths = OneDrivePaths(urlPath: "/My Files/")
        XCTAssertEqual(paths.url("G", .rootContainer, "children"), "G/me/drive/root:/My%20Files:/children")
        XCTAssertEqual(paths.url("G", ItemIdentifier("/a#b"), nil), "G/me/drive/root:/My%20Files/a%23b:")
        XCTAssertEqual(OneDrivePaths(urlPath: "/").url("G", .rootContainer, "delta"), "G/me/drive/root/delta")
        XCTAssertEqual(OneDriveItems.timestamp("2017-01-02T03:04:05Z"), Timestamp(seconds: 1_483_326_245))
        XCTAssertEqual(OneDriveItems.timestamp("2017-01-02T03:04:05.25Z"), Timestamp(seconds: 1_483_326_245, nanoseconds: 250_000_000))
        XCTAssertNil(OneDriveItems.timestamp("2017-01-02 03:04:05"))
        XCTAssertEqual(OneDriveItems.text(Timestamp(seconds: 1_483_326_245, nanoseconds: 9)), "2017-01-02T03:04:05Z")
    }

    // MARK: helpers

    private func wait(_ seconds: Double, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        return condition()
    }
}

/// Folders a watcher reported, from its task.
private final class Reported: @unchecked Sendable {
    private let lock = NSLock()
    private var folders = Set<ItemIdentifier>()
    func add(_ folder: ItemIdentifier) { lock.withLock { _ = folders.insert(folder) } }
    var all: Set<ItemIdentifier> { lock.withLock { folders } }
}
