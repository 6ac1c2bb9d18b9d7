import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// Dropbox's long poll as the provider's change feed (`FolderWatchingProvider`), against the API
/// fixture, which sees changes a test makes on its disk as another Dropbox client's.
final class DropboxChangeFeedTests: XCTestCase {
    /// The folders reported, in order.
    private final class Reports: @unchecked Sendable {
        private let lock = NSLock()
        private var folders: [ItemIdentifier] = []
        func add(_ f: ItemIdentifier) { lock.withLock { folders.append(f) } }
        var all: [ItemIdentifier] { lock.withLock { folders } }
    }

    private func server(_ configure: (inout DropboxServer.Settings) -> Void = { _ in }) throws -> DropboxServer {
        var settings = DropboxServer.Settings()
        configure(&settings)
        let s = try DropboxServer.started(settings)
        addTeardownBlock { s.remove() }
        return s
    }

    private func provider(_ s: DropboxServer, root: String = "/") -> DropboxProvider {
        var c = DropboxProvider.Configuration(endpoints: DropboxEndpoints(base: s.endpoint), clientID: s.clientID,
                                              refreshToken: s.refreshToken, rootFolder: root, remoteDescription: "dropbox://\(root)")
        c.longPollTimeout = 30
        c.changeFeedMaxRetryDelay = 2
        let p = DropboxProvider(configuration: c, transport: CurlTransport())
        addTeardownBlock { await p.stopWatching() }
        return p
    }

    private func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    /// A file made in a folder and a file deleted at the root, on the server's disk while a long
    /// poll waits, are reported as their folders within seconds; the root folder of the remote
    /// (`/Team`) is left out of the identifiers.
    func testChangesAtTheServerAreReportedThroughTheLongPoll() throws {
        let s = try server()
        try DirectorySeeding.seed(s.root, files: ["Team/old.txt": Data("o".utf8), "Team/sub/a.txt": Data("a".utf8),
                                                  "elsewhere.txt": Data("e".utf8)], folders: [])
        let p = provider(s, root: "/Team")
        let reports = Reports()
        p.startWatching { reports.add($0) }
        XCTAssertTrue(waitUntil(10) { s.requests("get_latest_cursor HTTP/1.1\" 200") == 1 }, "no cursor taken: \(s.log())")
        usleep(500_000)   // the long poll is waiting now
        XCTAssertTrue(p.isWatchingLive)
        let started = Date()
        try Data("new".utf8).write(to: s.root.appendingPathComponent("Team/sub/new.txt"))
        try FileManager.default.removeItem(at: s.root.appendingPathComponent("Team/old.txt"))
        XCTAssertTrue(waitUntil(5) { Set(reports.all).isSuperset(of: [ItemIdentifier("/sub"), .rootContainer]) },
                      "reported \(reports.all); log: \(s.log())")
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertGreaterThanOrEqual(s.requests("list_folder/continue HTTP/1.1\" 200"), 1)

        // A change outside the remote's root is outside the cursor's folder: nothing reported.
        let before = reports.all.count
        try Data("x".utf8).write(to: s.root.appendingPathComponent("elsewhere.txt"))
        usleep(1_500_000)
        XCTAssertEqual(reports.all.count, before, "\(reports.all)")
    }

    /// Changes listed over several pages of `list_folder/continue` are all reported: a folder
    /// of five files appears at once (one rename), six entries in three pages of two.
    func testChangesOverSeveralPagesAreAllReported() throws {
        let s = try server { $0.pageSize = 2 }
        let p = provider(s)
        let reports = Reports()
        p.startWatching { reports.add($0) }
        XCTAssertTrue(waitUntil(10) { s.requests("get_latest_cursor HTTP/1.1\" 200") == 1 }, s.log())
        usleep(300_000)
        let staging = s.root.deletingLastPathComponent().appendingPathComponent("staging-\(UUID().uuidString.prefix(6))")
        try DirectorySeeding.seed(staging, files: Dictionary(uniqueKeysWithValues: (1...5).map { ("batch/f\($0).txt", Data("\($0)".utf8)) }),
                                  folders: [])
        defer { try? FileManager.default.removeItem(at: staging) }
        try FileManager.default.moveItem(at: staging.appendingPathComponent("batch"), to: s.root.appendingPathComponent("batch"))
        XCTAssertTrue(waitUntil(8) { Set(reports.all).isSuperset(of: [.rootContainer, ItemIdentifier("/batch")]) },
                      "reported \(reports.all); log: \(s.log())")
        XCTAssertEqual(s.requests("list_folder/continue HTTP/1.1\" 200"), 3, "three pages: \(s.log())")
    }

    /// The `backoff` of a long-poll answer is waited out before the next long poll: a change
    /// made right after one was reported arrives only after it.
    func testTheBackoffOfAnAnswerIsHonoured() throws {
        let s = try server { $0.longPollBackoff = 2 }
        let p = provider(s)
        let reports = Reports()
        let times = Reports()
        let start = Date()
        p.startWatching { folder in
            reports.add(folder)
            // The report's time, kept as an identifier: milliseconds since the start.
            times.add(ItemIdentifier("/\(Int(Date().timeIntervalSince(start) * 1000))"))
        }
        XCTAssertTrue(waitUntil(10) { s.requests("get_latest_cursor HTTP/1.1\" 200") == 1 }, s.log())
        usleep(300_000)
        try FileManager.default.createDirectory(at: s.root.appendingPathComponent("one"), withIntermediateDirectories: true)
        XCTAssertTrue(waitUntil(5) { reports.all.contains(ItemIdentifier("/one")) }, "\(reports.all)")
        try FileManager.default.createDirectory(at: s.root.appendingPathComponent("two"), withIntermediateDirectories: true)
        XCTAssertTrue(waitUntil(8) { reports.all.contains(ItemIdentifier("/two")) }, "\(reports.all)")
        let ms = times.all.compactMap { Int($0.name) }
        let first = try XCTUnwrap(ms.first), last = try XCTUnwrap(ms.last)
        XCTAssertGreaterThanOrEqual(last - first, 1800, "the second change came \(last - first) ms after the first: the 2 s backoff was not waited")
    }

    /// A throttled long poll (429) waits out its `Retry-After` before the next one: a change
    /// made meanwhile arrives after the wait, and no long poll is sent during it.
    func testAThrottledLongPollWaitsOutItsRetryAfter() throws {
        let s = try server { $0.longPollThrottle = 1; $0.retryAfter = 2 }
        let p = provider(s)
        let reports = Reports()
        let start = Date()
        p.startWatching { reports.add($0) }
        XCTAssertTrue(waitUntil(10) { s.requests("longpoll HTTP/1.1\" 429") == 1 }, s.log())
        let throttled = Date()
        try FileManager.default.createDirectory(at: s.root.appendingPathComponent("made"), withIntermediateDirectories: true)
        XCTAssertTrue(waitUntil(8) { reports.all.contains(ItemIdentifier("/made")) }, "reported \(reports.all); log: \(s.log())")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(throttled), 1.5, "the Retry-After of 2 s was not waited")
        XCTAssertLessThan(Date().timeIntervalSince(start), 8)
        XCTAssertEqual(s.requests("longpoll HTTP/1.1\" 429"), 1, s.log())
        XCTAssertTrue(p.isWatchingLive, "a throttled feed is still live")
    }

    /// A cursor Dropbox resets is replaced by a new one, and the root is reported: what changed
    /// meanwhile is unknown.
    func testAResetCursorIsReplacedAndTheRootReported() throws {
        let s = try server()
        let p = provider(s)
        let reports = Reports()
        p.startWatching { reports.add($0) }
        XCTAssertTrue(waitUntil(10) { s.requests("get_latest_cursor HTTP/1.1\" 200") == 1 }, s.log())
        usleep(300_000)
        try s.resetCursors()
        XCTAssertTrue(waitUntil(5) { reports.all.contains(.rootContainer) }, "reported \(reports.all); log: \(s.log())")
        XCTAssertEqual(s.requests("get_latest_cursor HTTP/1.1\" 200"), 2, s.log())
        XCTAssertEqual(s.requests("longpoll HTTP/1.1\" 409"), 1, s.log())
        // The new cursor works: a change after the reset is reported as its folder.
        try FileManager.default.createDirectory(at: s.root.appendingPathComponent("made"), withIntermediateDirectories: true)
        XCTAssertTrue(waitUntil(5) { reports.all.contains(ItemIdentifier("/made")) }, "reported \(reports.all); log: \(s.log())")
    }

    /// A cursor reset again as soon as it is taken is waited out like a failure (1, 2 … s), not
    /// asked for again at once.
    func testResetsInARowAreWaitedOut() throws {
        let s = try server { $0.alwaysReset = true }
        let p = provider(s)
        p.startWatching { _ in }
        usleep(3_500_000)   // cursors at about 0, 0, 1 and 3 s
        let cursors = s.requests("get_latest_cursor HTTP/1.1\" 200")
        XCTAssertGreaterThanOrEqual(cursors, 2, s.log())
        XCTAssertLessThanOrEqual(cursors, 5, "resets in a row hammered the server: \(cursors) cursors in 3.5 s")
    }

    /// Stopping the feed while a long poll waits (30 s here) ends its task at once: an unmount
    /// never waits for Dropbox's answer.
    func testStoppingCancelsAPendingLongPollPromptly() async throws {
        let s = try server()
        let p = provider(s)
        p.startWatching { _ in }
        XCTAssertTrue(waitUntil(10) { s.requests("get_latest_cursor HTTP/1.1\" 200") == 1 }, s.log())
        usleep(500_000)
        XCTAssertTrue(p.changeFeed.isRunning)
        let asked = Date()
        await p.stopWatching()
        XCTAssertFalse(p.changeFeed.isRunning, "the feed still runs after stopWatching")
        XCTAssertLessThan(Date().timeIntervalSince(asked), 3)
        usleep(500_000)
        XCTAssertEqual(s.requests("get_latest_cursor"), 1, "nothing new after stop: \(s.log())")
    }

    /// A feed whose server is down retries with waits that double up to the bound, and stops
    /// promptly even while it waits.
    func testAFailingFeedBacksOffWithinItsBound() async throws {
        var timing = DropboxChangeFeed.Timing()
        timing.firstRetryDelay = 1
        timing.maxRetryDelay = 60
        XCTAssertEqual((1...9).map { DropboxChangeFeed.retryDelay(afterFailures: $0, timing) }, [1, 2, 4, 8, 16, 32, 60, 60, 60])
        XCTAssertEqual(DropboxChangeFeed.retryDelay(afterFailures: 10_000, timing), 60)

        let s = try server()
        let p = provider(s)   // at most 2 s between attempts
        s.stop()
        p.startWatching { _ in }
        usleep(3_500_000)     // attempts at 0, 1 and 3 s
        XCTAssertTrue(p.changeFeed.isRunning)
        XCTAssertFalse(p.isWatchingLive, "a feed that fails is not live: the poller lists every round")
        let asked = Date()
        await p.stopWatching()
        XCTAssertFalse(p.changeFeed.isRunning)
        XCTAssertLessThan(Date().timeIntervalSince(asked), 3, "stopping waited out the retry delay")
    }

    /// The identifiers of change entries below the remote's root, compared without case.
    func testChangeEntriesMapToTheFoldersTheyChange() {
        let paths = DropboxPaths(urlPath: "/Team")
        func folders(_ tag: String, _ path: String) -> [String] {
            DropboxChangeFeed.folders(changedBy: [".tag": tag, "path_display": path], paths: paths).map(\.rawValue)
        }
        XCTAssertEqual(folders("file", "/Team/a.txt"), ["/"])
        XCTAssertEqual(folders("folder", "/team/Sub"), ["/", "/Sub"])
        XCTAssertEqual(folders("deleted", "/Team/Sub/x"), ["/Sub"])
        XCTAssertEqual(folders("folder", "/Team"), ["/"])
        XCTAssertEqual(folders("file", "/Teamwork/a"), [])
        XCTAssertEqual(DropboxChangeFeed.folders(changedBy: [".tag": "file", "path_display": "/a/b"], paths: DropboxPaths(urlPath: "/")).map(\.rawValue), ["/a"])
    }
}
