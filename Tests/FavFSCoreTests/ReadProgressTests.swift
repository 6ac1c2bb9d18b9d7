import XCTest
import FavFSCore
import Providers

/// A read waits only for its own bytes: a reader of the first 4 KiB of a 2 MiB request is
/// answered as soon as those bytes land, while the rest of the request is still held back.
final class ReadProgressTests: XCTestCase {
    /// The local provider's bytes, delivered in two steps: the first chunk (with progress), then
    /// — only once the test opens the gate — the rest of the range.
    final class GatedProvider: Provider, @unchecked Sendable {
        let inner: LocalProvider
        let root: String
        private let lock = NSLock()
        private var gate: CheckedContinuation<Void, Never>?
        private var open = false
        init(root: String) { self.root = root; inner = LocalProvider(root: root) }
        var remoteDescription: String { inner.remoteDescription }
        var capabilities: ProviderCapabilities { inner.capabilities }
        func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
            try await inner.enumerateItems(in: folder, page: page)
        }
        func item(for identifier: ItemIdentifier) async throws -> Item { try await inner.item(for: identifier) }

        func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
            let data = try Data(contentsOf: URL(fileURLWithPath: root + item.identifier.rawValue))
            let head = range.lowerBound..<min(range.upperBound, range.lowerBound + 128 * 1024)
            write(data, head, sink.fd)
            sink.progress?(head)
            await withCheckedContinuation { c in
                let run = lock.withLock { () -> Bool in if open { return true }; gate = c; return false }
                if run { c.resume() }
            }
            write(data, head.upperBound..<range.upperBound, sink.fd)
            return range
        }

        var released: Bool { lock.withLock { open } }

        func release() {
            let c = lock.withLock { () -> CheckedContinuation<Void, Never>? in open = true; defer { gate = nil }; return gate }
            c?.resume()
        }

        private func write(_ data: Data, _ r: Range<Int64>, _ fd: Int32) {
            guard !r.isEmpty else { return }
            data[Int(r.lowerBound)..<Int(r.upperBound)].withUnsafeBytes { _ = pwrite(fd, $0.baseAddress, $0.count, off_t(r.lowerBound)) }
        }
    }

    func testAReaderIsAnsweredWhenItsBytesLandNotWhenTheRequestEnds() async throws {
        let f = try LocalFixture()
        let data = randomData(4 << 20)
        try f.write("big.bin", data)
        let provider = GatedProvider(root: f.served.path)
        let store = try PlaceholderStore(path: f.cacheDir.appendingPathComponent("p.sqlite").path)
        let content = try ContentCache(directory: f.cacheDir.appendingPathComponent("content"), store: store, limit: 1 << 30)
        let d = Domain(provider: provider, store: store, content: content, options: DomainOptions())
        _ = try await d.children(of: .rootContainer)
        let (h, _) = try d.openFile(ItemIdentifier("/big.bin"))
        defer { provider.release() }

        // The request for the reader's chunk is held after its first 128 KiB: the read must
        // complete anyway. Should it wait for the whole request, only the safety release after
        // 10 s would let it finish — and that shows.
        let safety = Task { try await Task.sleep(nanoseconds: 10_000_000_000); provider.release() }
        let r = try await d.read(handle: h, offset: 0, size: 4096)
        XCTAssertFalse(provider.released, "the read waited for the whole 2 MiB request, not for its own bytes")
        safety.cancel()
        XCTAssertEqual(bytes(r), data.prefix(4096))
        provider.release()
        let tail = try await d.read(handle: h, offset: 200_000, size: 4096)
        XCTAssertEqual(bytes(tail), data[200_000..<204_096])
        d.closeFile(h)
    }
}
