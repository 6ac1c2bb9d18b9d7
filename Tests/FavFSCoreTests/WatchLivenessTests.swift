import XCTest
@testable import FavFSCore
import Providers

/// The poller leaves watched folders to their watch (listing them every fourth round only)
/// while the watch is live, and lists them every round while it is not (a change feed that
/// keeps failing must not leave changes waiting four intervals).
final class WatchLivenessTests: XCTestCase {
    /// A provider whose watch reports nothing and is live or not, as the test says.
    final class Watching: FolderWatchingProvider, @unchecked Sendable {
        let inner: RecordingProvider
        private let lock = NSLock()
        private var live = true
        init(_ inner: RecordingProvider) { self.inner = inner }
        func setLive(_ value: Bool) { lock.withLock { live = value } }
        var isWatchingLive: Bool { lock.withLock { live } }
        var remoteDescription: String { inner.remoteDescription }
        var capabilities: ProviderCapabilities { inner.capabilities }
        func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
            try await inner.enumerateItems(in: folder, page: page)
        }
        func item(for identifier: ItemIdentifier) async throws -> Item { try await inner.item(for: identifier) }
        func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
            try await inner.readContents(of: item, range: range, into: sink)
        }
        func startWatching(_ onChange: @escaping @Sendable (ItemIdentifier) -> Void) {}
        func watch(only folders: Set<ItemIdentifier>) {}
        func watch(_ folder: ItemIdentifier) {}
    }

    func testWatchedFoldersArePolledEveryRoundOnlyWhileTheWatchIsDown() async throws {
        let f = try LocalFixture()
        try f.write("a.txt", Data("a".utf8))
        let provider = Watching(f.provider)
        var o = DomainOptions()
        o.pollInterval = 0.2
        let store = try PlaceholderStore(path: f.cacheDir.appendingPathComponent("placeholders.sqlite").path)
        let content = try ContentCache(directory: f.cacheDir.appendingPathComponent("content"), store: store, limit: o.cacheLimit)
        let d = Domain(provider: provider, store: store, content: content, options: o)
        _ = try await d.connect()
        _ = try await d.children(of: .rootContainer)

        var before = f.provider.enumerations(of: .rootContainer)
        for round in 1...3 {   // not a fourth round: a live watch is trusted
            try await Task.sleep(nanoseconds: 250_000_000)
            await d.poller.poll(round: round, host: d)
        }
        XCTAssertEqual(f.provider.enumerations(of: .rootContainer), before, "a live watch's folder was listed")

        provider.setLive(false)
        before = f.provider.enumerations(of: .rootContainer)
        for round in 5...7 {
            try await Task.sleep(nanoseconds: 250_000_000)
            await d.poller.poll(round: round, host: d)
        }
        XCTAssertGreaterThanOrEqual(f.provider.enumerations(of: .rootContainer), before + 2, "the folder of a watch that is down was not polled")
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }
}
