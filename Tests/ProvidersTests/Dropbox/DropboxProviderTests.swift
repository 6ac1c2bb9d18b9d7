import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// What the Dropbox provider does beyond the conformance suite, against the API fixture (each
/// test starts its own, set up for what it checks): access tokens that run out, throttling,
/// a revoked refresh token, listing pages, revisions, upload sessions, names, quota and copies.
final class DropboxProviderTests: XCTestCase {
    private func server(_ configure: (inout DropboxServer.Settings) -> Void = { _ in }) throws -> DropboxServer {
        var settings = DropboxServer.Settings()
        configure(&settings)
        let s = try DropboxServer.started(settings)
        addTeardownBlock { s.remove() }
        return s
    }

    /// The provider as `favfs mount` makes it (URL, options, secret).
    private func provider(_ s: DropboxServer, secret: String? = nil, transport: TransportOptions = TransportOptions()) throws -> any WritableProvider {
        let url = try RemoteURL("dropbox:///")
        let p = try ProviderFactory.make(RemoteConfiguration(url: url, options: ["client_id": s.clientID, "endpoint": s.endpoint],
                                                             secret: secret ?? s.refreshToken), transport: transport)
        return try XCTUnwrap(p as? any WritableProvider)
    }

    private func direct(_ s: DropboxServer, _ configure: (inout DropboxProvider.Configuration) -> Void) -> DropboxProvider {
        var c = DropboxProvider.Configuration(endpoints: DropboxEndpoints(base: s.endpoint), clientID: s.clientID,
                                              refreshToken: s.refreshToken, remoteDescription: "dropbox:///")
        configure(&c)
        return DropboxProvider(configuration: c, transport: CurlTransport())
    }

    private func seed(_ s: DropboxServer, _ files: [String: Data]) throws {
        try DirectorySeeding.seed(s.root, files: files, folders: [])
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

    private func lines(_ s: DropboxServer, _ fragment: String) -> Int {
        s.log().components(separatedBy: "\n").filter { $0.contains(fragment) }.count
    }

    // MARK: authentication

    /// A token that runs out before the client expected (the fixture states a longer life than
    /// it gives) is answered 401 expired_access_token: the call gets a new token and succeeds.
    func testATokenThatExpiresMidUseIsReplacedWithoutFailingTheCall() async throws {
        let s = try server { $0.tokenLifetime = 2; $0.statedLifetime = 3600 }
        try seed(s, ["a.txt": Data("a".utf8)])
        let p = try XCTUnwrap(try provider(s) as? DropboxProvider)
        let first = try await p.enumerateAll(in: .rootContainer)
        XCTAssertEqual(first.map(\.name), ["a.txt"])
        XCTAssertEqual(p.accessTokensFetched, 1)
        try await Task.sleep(nanoseconds: 2_500_000_000)
        let again = try await p.item(for: ItemIdentifier("/a.txt"))
        XCTAssertEqual(again.size, 1)
        XCTAssertEqual(p.accessTokensFetched, 2, "one new token after the expiry")
        XCTAssertEqual(lines(s, "\" 401 "), 1, "the expired token was refused once: \(s.log())")
    }

    /// A token whose stated life is nearly over is renewed before use: no call is refused.
    func testTokensAreRenewedBeforeTheyRunOut() async throws {
        let s = try server { $0.tokenLifetime = 2 }
        try seed(s, ["a.txt": Data("a".utf8)])
        let p = try XCTUnwrap(try provider(s) as? DropboxProvider)
        _ = try await p.item(for: ItemIdentifier("/a.txt"))
        try await Task.sleep(nanoseconds: 2_200_000_000)
        _ = try await p.item(for: ItemIdentifier("/a.txt"))
        XCTAssertEqual(p.accessTokensFetched, 2)
        XCTAssertEqual(lines(s, "\" 401 "), 0, s.log())
    }

    /// A burst of calls with no token yet waits for one fetch, not one each.
    func testConcurrentCallsShareOneTokenFetch() async throws {
        let s = try server()
        try seed(s, ["a.txt": Data("a".utf8)])
        let p = try XCTUnwrap(try provider(s) as? DropboxProvider)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 { group.addTask {
                let item = try await p.item(for: ItemIdentifier("/a.txt"))
                XCTAssertEqual(item.size, 1)
            } }
            try await group.waitForAll()
        }
        XCTAssertEqual(p.accessTokensFetched, 1)
        XCTAssertEqual(lines(s, "/oauth2/token"), 1, s.log())
    }

    /// A refresh token Dropbox no longer takes (the user disconnected the app) is `.denied`,
    /// with words that say what to do.
    func testARevokedRefreshTokenSaysToSignInAgain() async throws {
        let s = try server()
        let p = try provider(s, secret: "revoked-refresh-token")
        let e = await expect(.denied, "listing with a revoked refresh token") { _ = try await p.enumerateItems(in: .rootContainer, page: nil) }
        XCTAssertTrue(e?.detail.contains("invalid_grant") ?? false, "\(String(describing: e))")
        XCTAssertTrue(e?.detail.contains("sign in again: favfs remote add NAME dropbox:/// --option client_id=\(s.clientID)") ?? false,
                      "the message names the command that signs in: \(String(describing: e))")
        XCTAssertEqual(e?.status, 400)
        // A refused fetch is not remembered: the next call asks again (the user may have fixed it).
        _ = await expect(.denied, "listing again") { _ = try await p.enumerateItems(in: .rootContainer, page: nil) }
        XCTAssertEqual(lines(s, "/oauth2/token"), 2, s.log())
        // The root's item, which a mount asks for first, is checked at Dropbox too (get_metadata
        // does not describe the root): the mount fails rather than mounting a folder it cannot list.
        _ = await expect(.denied, "the root's item") { _ = try await p.item(for: .rootContainer) }
        let root = try await provider(s).item(for: .rootContainer)
        XCTAssertEqual(root.kind, .folder)
    }

    /// An app key the fixture does not know: `.denied`, naming client_id.
    func testAWrongAppKeyIsNamed() async throws {
        let s = try server()
        let p = try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("dropbox:///"), options: ["client_id": "other-app", "endpoint": s.endpoint],
                                                             secret: s.refreshToken))
        let e = await expect(.denied, "listing with another app's key") { _ = try await p.enumerateItems(in: .rootContainer, page: nil) }
        XCTAssertTrue(e?.detail.contains("client_id") ?? false, "\(String(describing: e))")
    }

    // MARK: throttling

    /// 429 with Retry-After: waited out, then the call succeeds.
    func testThrottledAnswersAreWaitedOut() async throws {
        let s = try server { $0.throttle = 2; $0.retryAfter = 1 }
        try seed(s, ["a.txt": Data("abc".utf8)])
        let p = try provider(s)
        let started = Date()
        let item = try await p.item(for: ItemIdentifier("/a.txt"))
        XCTAssertEqual(item.size, 3)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 1.9, "Retry-After: 1 twice was not waited out")
        XCTAssertEqual(lines(s, "\" 429 "), 2)
    }

    /// A server that keeps throttling: the call gives up within the transport's low-speed time
    /// (here 3 s) with `.serverError`, never waits without bound.
    func testThrottlingIsWaitedOutOnlyWithinABound() async throws {
        let s = try server { $0.throttle = 1_000; $0.retryAfter = 1 }
        var transport = TransportOptions()
        transport.lowSpeedTime = 3
        let p = try provider(s, transport: transport)
        let started = Date()
        let e = await expect(.serverError, "listing while throttled") { _ = try await p.enumerateItems(in: .rootContainer, page: nil) }
        let took = Date().timeIntervalSince(started)
        XCTAssertLessThan(took, 6, "waited \(took) s")
        XCTAssertTrue(e?.detail.contains("throttling") ?? false, "\(String(describing: e))")
        XCTAssertEqual(e?.status, 429)
        XCTAssertLessThanOrEqual(lines(s, "\" 429 "), DropboxClient.maxThrottledRetries + 1)
    }

    // MARK: listing and reading

    /// A small page size: each `list_folder/continue` answer is one page, its cursor the token.
    func testListingFollowsCursorsAcrossPages() async throws {
        let s = try server { $0.pageSize = 7 }
        var files: [String: Data] = [:]
        for i in 0..<30 { files["many/f\(i)"] = Data("\(i)".utf8) }
        try seed(s, files)
        let p = try provider(s)
        var page: Page?
        var names: [String] = []
        var pages = 0
        repeat {
            let got = try await p.enumerateItems(in: ItemIdentifier("/many"), page: page)
            XCTAssertLessThanOrEqual(got.items.count, 7)
            names += got.items.map(\.name)
            page = got.nextPage
            pages += 1
        } while page != nil && pages < 100
        XCTAssertEqual(pages, 5)
        XCTAssertEqual(Set(names), Set((0..<30).map { "f\($0)" }))
        XCTAssertEqual(names.count, 30)
        XCTAssertEqual(lines(s, "list_folder/continue"), 4)
    }

    /// A read pinned to a revision the file no longer has is `.versionChanged`; the new
    /// revision reads the new bytes.
    func testAReadOfARevisionThatChangedIsVersionChanged() async throws {
        let s = try server()
        try seed(s, ["f.bin": Data(repeating: 1, count: 10_000)])
        let p = try provider(s)
        let old = try await p.item(for: ItemIdentifier("/f.bin"))
        try DirectorySeeding.overwrite(s.root, "f.bin", with: Data(repeating: 2, count: 10_000))
        _ = await expect(.versionChanged, "reading the old revision") { _ = try await Conformance.read(p, old, 0..<10_000) }
        let new = try await p.item(for: ItemIdentifier("/f.bin"))
        XCTAssertNotEqual(new.version, old.version)
        let bytes = try await Conformance.read(p, new, 100..<200)
        XCTAssertEqual(bytes, Data(repeating: 2, count: 100))
    }

    // MARK: writing

    /// update(rev) against a file changed meanwhile: `.versionChanged`, and the file keeps
    /// the other writer's bytes.
    func testAnUploadOverAChangedRevisionIsVersionChanged() async throws {
        let s = try server()
        try seed(s, ["doc.txt": Data("base".utf8)])
        let p = try provider(s)
        let base = try await p.item(for: ItemIdentifier("/doc.txt"))
        try DirectorySeeding.overwrite(s.root, "doc.txt", with: Data("theirs".utf8))
        let (src, done) = try source(Data("mine".utf8))
        defer { done() }
        let e = await expect(.versionChanged, "replacing a changed revision") {
            _ = try await p.upload(base.identifier, from: src, precondition: .mustMatch(try XCTUnwrap(base.version)))
        }
        XCTAssertTrue(e?.detail.contains("path/conflict/file") ?? false, "\(String(describing: e))")
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("doc.txt")), Data("theirs".utf8))
    }

    /// Above the session threshold an upload goes up in slices (start, append_v2, finish), each
    /// at its offset; the result is whole, and update(rev) is still checked at the finish.
    func testLargeUploadsGoThroughAnUploadSession() async throws {
        let s = try server()
        let p = direct(s) { $0.sessionThreshold = 1 << 20; $0.sessionChunkSize = 256 << 10 }
        let data = Data((0..<(1_300_000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        let (src, done) = try source(data)
        defer { done() }
        let made = try await p.upload(ItemIdentifier("/big.bin"), from: src, precondition: .mustNotExist)
        XCTAssertEqual(made.size, Int64(data.count))
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("big.bin")), data)
        XCTAssertEqual(lines(s, "upload_session/start"), 1)
        XCTAssertEqual(lines(s, "upload_session/append_v2"), 3, "1,300,000 bytes in five 256 KiB slices: start, 3 appends, the last with finish")
        XCTAssertEqual(lines(s, "upload_session/finish"), 1)

        try DirectorySeeding.overwrite(s.root, "big.bin", with: Data("theirs".utf8))
        _ = await expect(.versionChanged, "a session replacing a changed revision") {
            _ = try await p.upload(made.identifier, from: src, precondition: .mustMatch(try XCTUnwrap(made.version)))
        }
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("big.bin")), Data("theirs".utf8))
    }

    /// Every upload carries the cached file's content_hash: bytes damaged on the way are
    /// refused by Dropbox (nothing written, a transient error the core retries), and the next
    /// upload lands whole. A session upload is checked against the hash Dropbox returns.
    func testAnUploadDamagedOnTheWayIsRefusedAndNothingIsWritten() async throws {
        let s = try server()
        try seed(s, ["doc.txt": Data("base".utf8)])
        let p = try provider(s)
        let base = try await p.item(for: ItemIdentifier("/doc.txt"))
        let mine = Data((0..<(5 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 13) })  // two 4 MiB blocks
        let (src, done) = try source(mine)
        defer { done() }
        try s.corrupt(uploads: 1)
        let e = await expect(.serverError, "an upload damaged on the way") {
            _ = try await p.upload(base.identifier, from: src, precondition: .mustMatch(try XCTUnwrap(base.version)))
        }
        XCTAssertTrue(e?.isTransient ?? false)
        XCTAssertTrue(e?.detail.contains("content_hash_mismatch") ?? false, "\(String(describing: e))")
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("doc.txt")), Data("base".utf8), "damaged bytes were written")
        let made = try await p.upload(base.identifier, from: src, precondition: .mustMatch(try XCTUnwrap(base.version)))
        XCTAssertEqual(made.size, Int64(mine.count))
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("doc.txt")), mine)
    }

    /// A download of a whole file is checked against its content_hash: damaged bytes are an
    /// error (read again), never content; a read of part of a file cannot be checked.
    func testADownloadDamagedOnTheWayIsRefused() async throws {
        let s = try server()
        let data = Data((0..<(4 << 20) + 1000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) })
        try seed(s, ["f.bin": data])
        let p = try provider(s)
        let item = try await p.item(for: ItemIdentifier("/f.bin"))
        try s.corrupt(downloads: 1)
        let e = await expect(.serverError, "a download damaged on the way") { _ = try await Conformance.read(p, item, 0..<item.size) }
        XCTAssertTrue(e?.detail.contains("content_hash") ?? false, "\(String(describing: e))")
        let again = try await Conformance.read(p, item, 0..<item.size)
        XCTAssertEqual(again, data)
        // The hash itself, against Python's hashlib doing what Dropbox's reference says
        // (SHA-256 over the 4 MiB blocks' SHA-256s).
        let (src, done) = try source(data)
        defer { done() }
        let path = NSTemporaryDirectory() + "favfs-dropbox-hash-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let script = "import hashlib,sys; d=open(sys.argv[1],'rb').read(); print(hashlib.sha256(b''.join(hashlib.sha256(d[i:i+4194304]).digest() for i in range(0,len(d),4194304))).hexdigest())"
        let expected = try Shell.run("/usr/bin/python3", ["-c", script, path])
        XCTAssertEqual(DropboxContentHash.of(fd: src.fd, length: src.length), expected.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Previews come from get_thumbnail_v2 (`PreviewChecks`).
    func testThumbnailsAreDropboxsPreviews() async throws {
        let s = try server()
        let p = try XCTUnwrap(try provider(s) as? any ThumbnailProvider)
        try await PreviewChecks.check(p, served: s.root, downloads: { lines(s, "files/download") })
    }

    /// Names are compared without case: a new `A.TXT` beside `a.txt` replaces nothing.
    func testANameThatDiffersOnlyInCaseIsTheSameFile() async throws {
        let s = try server()
        try seed(s, ["a.txt": Data("original".utf8)])
        let p = try provider(s)
        let (src, done) = try source(Data("other".utf8))
        defer { done() }
        _ = await expect(.exists, "creating A.TXT beside a.txt") {
            _ = try await p.upload(ItemIdentifier("/A.TXT"), from: src, precondition: .mustNotExist)
        }
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("a.txt")), Data("original".utf8))
    }

    /// Names Dropbox refuses are refused before anything is sent; Windows' other characters
    /// and a trailing dot are kept, as Dropbox keeps them.
    func testNamesDropboxRefusesAreRefusedBeforeWriting() async throws {
        let s = try server()
        let p = try provider(s)
        for name in ["back\\slash", "trailing space ", "del\u{7F}"] {
            XCTAssertEqual(p.storageProblem(ItemIdentifier("/" + name), kind: .file)?.kind, .invalidName, name)
            _ = await expect(.invalidName, "mkdir \(name)") { _ = try await p.createFolder(ItemIdentifier("/" + name)) }
        }
        XCTAssertEqual(lines(s, "create_folder_v2"), 0, "a refused name was sent")
        for name in ["what?", "co:lon", "a<b>|\"*", "trailing dots..."] {
            XCTAssertNil(p.storageProblem(ItemIdentifier("/" + name), kind: .file), name)
            let made = try await p.createFolder(ItemIdentifier("/" + name))
            XCTAssertEqual(made.kind, .folder)
        }
    }

    /// `df`: used and what is left of the allocation.
    func testQuotaIsTheSpaceUsage() async throws {
        let s = try server()
        try seed(s, ["a": Data(count: 1000), "d/b": Data(count: 24)])
        let q = try await provider(s).quota()
        XCTAssertEqual(q?.usedBytes, 1024)
        XCTAssertEqual(q?.availableBytes, 2 * 1024 * 1024 * 1024 * 1024 - 1024)
    }

    /// copy_v2 makes the copy at the server; onto an existing name it is `.exists`.
    func testServerSideCopyNeverReplaces() async throws {
        let s = try server()
        try seed(s, ["a.txt": Data("A".utf8), "b.txt": Data("B".utf8)])
        let p = try XCTUnwrap(try provider(s) as? any ServerSideCopyProvider)
        let a = try await p.item(for: ItemIdentifier("/a.txt"))
        let copy = try await p.copyItem(a, to: ItemIdentifier("/c.txt"))
        XCTAssertEqual(copy.size, 1)
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("c.txt")), Data("A".utf8))
        _ = await expect(.exists, "copying onto b.txt") { _ = try await p.copyItem(a, to: ItemIdentifier("/b.txt")) }
        XCTAssertEqual(try Data(contentsOf: s.root.appendingPathComponent("b.txt")), Data("B".utf8))
    }

    /// URL and options: the host is refused, client_id is required, endpoint must be a URL.
    func testRemoteURLsAndOptions() throws {
        XCTAssertEqual(try RemoteURL("dropbox:///Photos/2024").kind, .dropbox)
        XCTAssertEqual(try RemoteURL("dropbox:///Photos").description, "dropbox:///Photos")
        XCTAssertThrowsError(try RemoteURL("dropbox://host/x"))
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("dropbox:///"), secret: "t"))) { error in
            XCTAssertTrue("\(error)".contains("client_id"), "\(error)")
        }
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("dropbox:///"), options: ["client_id": "k", "endpoint": "ftp://x"], secret: "t")))
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("dropbox:///"), options: ["client_id": "k"])))
        for bad in ["5M", "0", "152M", "lots"] {
            XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("dropbox:///"), options: ["client_id": "k", "slice_size": bad], secret: "t"))) { error in
                XCTAssertTrue("\(error)".contains("slice_size"), "\(error)")
            }
        }
        let sliced = try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("dropbox:///"), options: ["client_id": "k", "slice_size": "12M"], secret: "t"))
        XCTAssertEqual((sliced as? DropboxProvider)?.streamingThreshold, 12 << 20)
        XCTAssertEqual(DropboxPaths(urlPath: "/").path(.rootContainer), "")
        XCTAssertEqual(DropboxPaths(urlPath: "/Photos/").path(ItemIdentifier("/a b")), "/Photos/a b")
        XCTAssertEqual(DropboxClient.json(["path": "/ü\u{7F}"], forHeader: true), "{\"path\":\"/\\u00fc\\u007f\"}")
    }

    private func source(_ data: Data) throws -> (ContentSource, () -> Void) {
        let path = NSTemporaryDirectory() + "favfs-dropbox-up-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ShellError("open \(path)") }
        return (ContentSource(fd: fd, length: Int64(data.count)), { close(fd); unlink(path) })
    }
}
