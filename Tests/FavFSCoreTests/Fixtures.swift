import Foundation
import GRDB
import XCTest
import FavFSCore
import Providers

/// A temp folder served by the real local provider, with a cache dir beside it.
final class LocalFixture {
    let base: URL
    let served: URL
    let cacheDir: URL
    let provider: RecordingProvider

    init() throws {
        base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-core-\(UUID().uuidString.prefix(8))")
        served = base.appendingPathComponent("served")
        cacheDir = base.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: cacheDir, withIntermediateDirectories: true)
        provider = RecordingProvider(LocalProvider(root: served.path))
        StoreWitness.reset()
    }

    func write(_ path: String, _ data: Data) throws {
        let url = served.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }

    func makeDomain(limit: Int64 = 1 << 30, dirCacheTime: Double = 60) throws -> Domain {
        var o = DomainOptions()
        o.cacheLimit = limit
        o.dirCacheTime = dirCacheTime
        return try makeDomain(options: o)
    }

    /// A domain over the served folder with these options (the cache limit is `options.cacheLimit`).
    func makeDomain(options: DomainOptions) throws -> Domain {
        let store = try PlaceholderStore(path: cacheDir.appendingPathComponent("placeholders.sqlite").path)
        let content = try ContentCache(directory: cacheDir.appendingPathComponent("content"), store: store, limit: options.cacheLimit)
        return Domain(provider: provider, store: store, content: content, options: options)
    }

    deinit {
        try? FileManager.default.removeItem(at: base)
        // Every core test also checks that no SQLite call ran under `Domain.lock`, and no
        // SQLite write under `ContentCache.lock`.
        let violations = StoreWitness.violations
        if !violations.isEmpty { XCTFail("store calls under a witnessed lock: \(violations)") }
    }
}

/// Wraps a real provider and records the ranges it was asked to read (to check what a read
/// fetched) — the bytes still come from the real provider.
final class RecordingProvider: Provider, @unchecked Sendable {
    let inner: any Provider
    private let lock = NSLock()
    private var _reads: [(String, Range<Int64>)] = []
    /// Per file, the reads running now; and the most files read at once so far.
    private var _readsRunning: [String: Int] = [:]
    private var _mostFilesReadAtOnce = 0
    private var _enumerated: [ItemIdentifier] = []
    fileprivate var _changed: [String] = []
    /// Nanoseconds each read waits first; only reads from `delayFrom` on, when that is set.
    var delay: UInt64 = 0
    var delayFrom: Int64 = 0
    /// Each upload first waits this long (cancellable): an upload still running at unmount.
    var uploadDelay: UInt64 = 0
    /// Nanoseconds each listing takes on top of the real one (a slow server).
    var listingDelay: UInt64 = 0
    /// Nanoseconds each move waits first (a rename still at the server).
    var moveDelay: UInt64 = 0
    /// Runs before each time is set (it may throw, as a server in trouble would, or wait).
    var setModifiedHook: (@Sendable (ItemIdentifier) async throws -> Void)?

    init(_ inner: any Provider) { self.inner = inner }
    var remoteDescription: String { inner.remoteDescription }
    /// Capabilities claimed beyond the real provider's (to test the core's answer to them).
    var extraCapabilities: ProviderCapabilities = []
    var capabilities: ProviderCapabilities { inner.capabilities.union(extraCapabilities) }
    var reads: [(String, Range<Int64>)] { lock.withLock { _reads } }
    /// The most distinct files that had a read running at the same time.
    var mostFilesReadAtOnce: Int { lock.withLock { _mostFilesReadAtOnce } }
    var enumerations: Int { lock.withLock { _enumerated.count } }
    /// The uploads and deletes asked of the remote so far, in order ("upload /a", "delete /a").
    var changesAsked: [String] { lock.withLock { _changed } }
    func enumerations(of folder: ItemIdentifier) -> Int { lock.withLock { _enumerated.filter { $0 == folder }.count } }

    func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        lock.withLock { _enumerated.append(folder) }
        // The listing is taken first and answered late, as a slow server's would be.
        var page = try await inner.enumerateItems(in: folder, page: page)
        if listingDelay > 0 { try await Task.sleep(nanoseconds: listingDelay) }
        // As nginx's dav-ext module does (with `extraCapabilities` saying so).
        if extraCapabilities.contains(.listingsMayLeaveOutDotNames) { page.items.removeAll { $0.name.hasPrefix(".") } }
        if dropsTimes { page.items = page.items.map(Self.withoutTime) }
        return page
    }
    func item(for identifier: ItemIdentifier) async throws -> Item {
        let item = try await inner.item(for: identifier)
        return dropsTimes ? Self.withoutTime(item) : item
    }
    /// As a remote that keeps no modification times (Favart) answers.
    var dropsTimes = false
    private static func withoutTime(_ item: Item) -> Item { var item = item; item.modifiedTime = nil; return item }
    func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let path = item.identifier.rawValue
        lock.withLock {
            _reads.append((path, range))
            _readsRunning[path, default: 0] += 1
            _mostFilesReadAtOnce = max(_mostFilesReadAtOnce, _readsRunning.count)
        }
        defer {
            lock.withLock {
                _readsRunning[path]! -= 1
                if _readsRunning[path] == 0 { _readsRunning[path] = nil }
            }
        }
        if delay > 0 && range.lowerBound >= delayFrom { try await Task.sleep(nanoseconds: delay) }
        return try await inner.readContents(of: item, range: range, into: sink)
    }
}

func randomData(_ n: Int, seed: UInt64 = 42) -> Data {
    var state = seed
    var d = Data(count: n)
    d.withUnsafeMutableBytes { raw in
        let p = raw.bindMemory(to: UInt8.self)
        for i in 0..<n {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            p[i] = UInt8(truncatingIfNeeded: state >> 33)
        }
    }
    return d
}

/// The bytes a ReadResult points at.
func bytes(_ r: ReadResult) -> Data {
    var d = Data(count: r.length)
    let n = d.withUnsafeMutableBytes { pread(r.fd, $0.baseAddress, r.length, off_t(r.offset)) }
    return d.prefix(max(0, n))
}

extension RecordingProvider: WritableProvider {
    private var w: any WritableProvider { inner as! any WritableProvider }
    func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        lock.withLock { _changed.append("upload \(id)") }
        if uploadDelay > 0 { try await Task.sleep(nanoseconds: uploadDelay) }
        return try await w.upload(id, from: source, precondition: precondition)
    }
    func createFolder(_ id: ItemIdentifier) async throws -> Item { try await w.createFolder(id) }
    func delete(_ item: Item) async throws {
        lock.withLock { _changed.append("delete \(item.identifier)") }
        try await w.delete(item)
    }
    func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        if moveDelay > 0 { try await Task.sleep(nanoseconds: moveDelay) }
        return try await w.move(item, to: destination, replacing: replacing)
    }
    func setModified(_ id: ItemIdentifier, to time: Timestamp) async throws -> Item {
        if let hook = setModifiedHook { try await hook(id) }
        return try await w.setModified(id, to: time)
    }
    func createSymlink(_ id: ItemIdentifier, target: String) async throws -> Item { try await w.createSymlink(id, target: target) }
}

/// SQLite's writer taken by another connection (as a large listing's save takes it) until
/// `release`: the store's writes wait behind it, its reads (WAL) do not.
final class HeldWriter: @unchecked Sendable {
    private let released = DispatchSemaphore(value: 0)
    private let held = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private var failure: Error?

    /// Waits (up to SQLite's busy timeout) for a write of the store's own to end first.
    init(_ path: String) throws {
        var config = Configuration()
        config.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: path, configuration: config)
        Thread { [self] in
            do {
                try queue.inDatabase { db in
                    try db.execute(sql: "BEGIN IMMEDIATE")
                    held.signal()
                    released.wait()
                    try db.execute(sql: "COMMIT")
                }
            } catch {
                // Never taken: `init` throws instead of waiting for ever.
                if failure == nil { failure = error; held.signal() }
            }
            done.signal()
        }.start()
        held.wait()
        if let failure { throw failure }
    }

    func release() {
        released.signal()
        done.wait()
    }
}
