import XCTest
@testable import FavFSCore
import Providers
import FUSEBridge

final class DomainTests: XCTestCase {
    func testListingIsServedFromPlaceholdersWhileFresh() async throws {
        let f = try LocalFixture()
        try f.write("a.txt", Data("hello".utf8))
        try f.write("sub/b.txt", Data("b".utf8))
        let d = try f.makeDomain()
        _ = try await d.connect()
        let names = try await d.children(of: .rootContainer).map(\.name)
        XCTAssertEqual(names, ["a.txt", "sub"])
        let sub = try await d.lookup(.rootContainer, "sub")
        XCTAssertEqual(sub.kind, .folder)
        // A new remote file is not seen while the listing is fresh...
        try f.write("c.txt", Data())
        _ = try await d.children(of: .rootContainer)
        XCTAssertEqual(f.provider.enumerations(of: .rootContainer), 1)
        do { _ = try await d.lookup(.rootContainer, "c.txt"); XCTFail("fresh listing must answer ENOENT") }
        catch let e as ProviderError { XCTAssertEqual(e.kind, .notFound) }
    }

    func testStaleListingIsServedThenRevalidatedInTheBackground() async throws {
        let f = try LocalFixture()
        try f.write("a.txt", Data("hello".utf8))
        let d = try f.makeDomain(dirCacheTime: 0)
        _ = try await d.children(of: .rootContainer)
        try f.write("new.txt", Data())
        try FileManager.default.removeItem(at: f.served.appendingPathComponent("a.txt"))
        // Stale: the old listing comes back at once, a refresh starts.
        let first = try await d.children(of: .rootContainer).map(\.name)
        XCTAssertEqual(first, ["a.txt"])
        var names: [String] = []
        for _ in 0..<500 {
            try await Task.sleep(nanoseconds: 20_000_000)
            names = try await d.children(of: .rootContainer).map(\.name)
            if names == ["new.txt"] { break }
        }
        XCTAssertEqual(names, ["new.txt"])
    }

    func testPlaceholdersSurviveARestartAndServeOfflineWhenTheRemoteIsUnreachable() async throws {
        let f = try LocalFixture()
        try f.write("x/y/z.txt", Data("z".utf8))
        do {
            let d = try f.makeDomain()
            _ = try await d.connect()
            _ = try await d.children(of: .rootContainer)
            _ = try await d.children(of: ItemIdentifier("/x"))
            _ = try await d.children(of: ItemIdentifier("/x/y"))
        }
        // A new Domain over the same cache answers from the store without waiting for the
        // remote; the folder is revalidated once in the background (placeholders of an earlier
        // mount are not trusted to say what does not exist).
        try await Task.sleep(nanoseconds: 100_000_000) // background subfolder listings settle
        let before = f.provider.enumerations
        let d2 = try f.makeDomain()
        let z = try await d2.lookup(ItemIdentifier("/x/y"), "z.txt")
        XCTAssertEqual(z.size, 1)
        XCTAssertLessThanOrEqual(f.provider.enumerations, before + 1)
        XCTAssertEqual(d2.cachedItem(ItemIdentifier("/x/y/z.txt"))?.kind, .file)
    }

    /// FTP: a read that stops before the end costs the connection. A small file is read to
    /// its end in one request; a big one still only where it is read.
    func testWherePartialReadsCostAConnectionSmallFilesAreReadToTheEndInOneRequest() async throws {
        let f = try LocalFixture()
        f.provider.extraCapabilities = [.partialReadsCostAConnection]
        let small = randomData(3 << 20, seed: 3), big = randomData(20 << 20, seed: 4)
        try f.write("small.bin", small)
        try f.write("big.bin", big)
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        let (h, _) = try d.openFile(ItemIdentifier("/small.bin"))
        let r = try await d.read(handle: h, offset: 0, size: 4096)
        XCTAssertEqual(bytes(r), small.prefix(4096))
        XCTAssertEqual(f.provider.reads.map(\.1), [0..<Int64(small.count)], "one request, to the end")
        d.closeFile(h)
        let (hb, _) = try d.openFile(ItemIdentifier("/big.bin"))
        _ = try await d.read(handle: hb, offset: 0, size: 4096)
        let fetched = f.provider.reads.filter { $0.0 == "/big.bin" }.reduce(Int64(0)) { $0 + Int64($1.1.count) }
        XCTAssertLessThanOrEqual(fetched, 2 << 20, "a 4 KiB read of a 20 MiB file fetched \(fetched) bytes")
        d.closeFile(hb)
    }

    /// A remote whose listings leave out dot names (nginx): such a name is asked for before it
    /// is called absent, joins the listing here, and goes once the remote no longer has it.
    func testDotNamesAListingLeavesOutAreAskedForByName() async throws {
        let f = try LocalFixture()
        f.provider.extraCapabilities = [.listingsMayLeaveOutDotNames]
        try f.write(".git/HEAD", Data("ref".utf8))
        try f.write("plain", Data("p".utf8))
        let d = try f.makeDomain(dirCacheTime: 0)
        _ = try await d.connect()
        let listed = try await d.children(of: .rootContainer).map(\.name)
        XCTAssertEqual(listed, ["plain"])
        XCTAssertNil(d.lookupImmediately(.rootContainer, ".git"), "a listing that leaves dot names out cannot call one absent")
        let git = try await d.lookup(.rootContainer, ".git")
        XCTAssertEqual(git.kind, .folder)
        let head = try await d.lookup(ItemIdentifier("/.git"), "HEAD")
        XCTAssertEqual(head.size, 3)
        // Known now, it stays through listings while it is there (stale at once: each call
        // starts a listing in the background)...
        let before = f.provider.enumerations(of: .rootContainer)
        var names: [String] = []
        for _ in 0..<500 {
            names = try await d.children(of: .rootContainer).map(\.name)
            if f.provider.enumerations(of: .rootContainer) >= before + 2 { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTAssertEqual(names, [".git", "plain"])
        // ...and goes with it.
        try FileManager.default.removeItem(at: f.served.appendingPathComponent(".git"))
        for _ in 0..<500 {
            names = try await d.children(of: .rootContainer).map(\.name)
            if names == ["plain"] { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTAssertEqual(names, ["plain"])
        do { _ = try await d.lookup(.rootContainer, ".nothing"); XCTFail("absent") }
        catch let e as ProviderError { XCTAssertEqual(e.kind, .notFound) }
    }

    /// A remote that keeps no times (Favart): an item shows when this cache dir first saw its
    /// version, not 1970 — the same at every listing and after a restart, new when its content
    /// changes (a thumbnail's Thumb::MTime stays valid exactly as long as the image).
    func testItemsWithoutTimesShowWhenThisCacheFirstSawThem() async throws {
        let f = try LocalFixture()
        f.provider.dropsTimes = true
        try f.write("a.jpg", Data("one".utf8))
        let start = Int64(Date().timeIntervalSince1970)
        var d = try f.makeDomain(dirCacheTime: 0)
        _ = try await d.connect()
        XCTAssertGreaterThanOrEqual(d.cachedItem(.rootContainer)?.modifiedTime?.seconds ?? 0, start, "the root")
        let found = try await d.lookup(.rootContainer, "a.jpg")
        let t = try XCTUnwrap(found.modifiedTime)
        XCTAssertGreaterThanOrEqual(t.seconds, start)
        try await Task.sleep(nanoseconds: 1_100_000_000)
        func relisted(_ d: Domain) async throws -> Item? {
            let before = f.provider.enumerations(of: .rootContainer)
            for _ in 0..<500 where f.provider.enumerations(of: .rootContainer) < before + 2 {
                _ = try await d.children(of: .rootContainer)
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            return try await d.children(of: .rootContainer).first { $0.name == "a.jpg" }
        }
        let again = try await relisted(d)
        XCTAssertEqual(again?.modifiedTime, t, "a listing kept the time")
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)

        d = try f.makeDomain(dirCacheTime: 0)
        _ = try await d.connect()
        let afterRestart = try await relisted(d)
        XCTAssertEqual(afterRestart?.modifiedTime, t, "the time survived a restart")
        try f.write("a.jpg", Data("another image".utf8))
        var changed: Item?
        for _ in 0..<500 {
            changed = try await d.children(of: .rootContainer).first { $0.name == "a.jpg" }
            if changed?.size == 13 { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTAssertEqual(changed?.size, 13)
        XCTAssertGreaterThan(changed?.modifiedTime?.seconds ?? 0, t.seconds, "new content, a new time")
        _ = await d.stopBackgroundWork(within: 20)
        _ = d.shutdown(keepContent: true)
    }

    func testAPartialReadFetchesOnlyItsChunks() async throws {
        let f = try LocalFixture()
        let data = randomData(8 << 20)
        try f.write("big.bin", data)
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        let (h, _) = try d.openFile(ItemIdentifier("/big.bin"))
        let offset: Int64 = 5_000_000
        let r = try await d.read(handle: h, offset: offset, size: 4096)
        XCTAssertEqual(bytes(r), data.subdata(in: Int(offset)..<Int(offset) + 4096))
        let fetched = f.provider.reads.reduce(Int64(0)) { $0 + Int64($1.1.count) }
        XCTAssertLessThanOrEqual(fetched, 256 << 10, "a 4 KiB read fetched \(fetched) bytes")
        XCTAssertEqual(d.state(of: ItemIdentifier("/big.bin"))?.hasPrefix("partial"), true)
        d.closeFile(h)
    }

    func testSequentialReadGetsGrowingReadAheadAndEveryByteMatches() async throws {
        let f = try LocalFixture()
        let data = randomData(6 << 20, seed: 7)
        try f.write("seq.bin", data)
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        let (h, _) = try d.openFile(ItemIdentifier("/seq.bin"))
        var out = Data()
        var off: Int64 = 0
        while off < Int64(data.count) {
            let r: ReadResult
            if let hit = d.readIfPresent(handle: h, offset: off, size: 128 << 10) { r = hit }
            else { r = try await d.read(handle: h, offset: off, size: 128 << 10) }
            out += bytes(r)
            off += Int64(r.length)
        }
        XCTAssertEqual(out, data)
        // Read-ahead means far fewer provider reads than 128 KiB reader calls (48).
        XCTAssertLessThan(f.provider.reads.count, 24)
        d.closeFile(h)
    }

    func testListingAFolderListsItsSubfoldersInTheBackground() async throws {
        let f = try LocalFixture()
        for i in 0..<5 { try f.write("d\(i)/x.txt", Data("x".utf8)) }
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        for _ in 0..<1000 where f.provider.enumerations < 6 { try await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertEqual(f.provider.enumerations, 6, "root and its 5 subfolders")
        // An opendir now is served from placeholders.
        let names = try await d.children(of: ItemIdentifier("/d3")).map(\.name)
        XCTAssertEqual(names, ["x.txt"])
        XCTAssertEqual(f.provider.enumerations(of: ItemIdentifier("/d3")), 1)
    }

    func testSustainedRandomReadsFetchTheWholeFileInTheBackground() async throws {
        let f = try LocalFixture()
        let data = randomData(16 << 20, seed: 3)
        try f.write("r.bin", data)
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        let (h, _) = try d.openFile(ItemIdentifier("/r.bin"))
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<40 {
            let off = Int64.random(in: 0..<(16 << 20) - 4096, using: &rng)
            let r = try await d.read(handle: h, offset: off, size: 4096)
            XCTAssertEqual(bytes(r), data.subdata(in: Int(off)..<Int(off) + 4096))
        }
        for _ in 0..<3000 where d.state(of: ItemIdentifier("/r.bin")) != "materialized" {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        XCTAssertEqual(d.state(of: ItemIdentifier("/r.bin")), "materialized")
        d.closeFile(h)
    }

    func testTwoReadersOfOneRangeShareOneDownload() async throws {
        let f = try LocalFixture()
        try f.write("s.bin", randomData(1 << 20))
        f.provider.delay = 200_000_000
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        let (h1, _) = try d.openFile(ItemIdentifier("/s.bin"))
        let (h2, _) = try d.openFile(ItemIdentifier("/s.bin"))
        async let a = d.read(handle: h1, offset: 300_000, size: 4096)
        async let b = d.read(handle: h2, offset: 300_000, size: 4096)
        let (ra, rb) = try await (a, b)
        XCTAssertEqual(bytes(ra), bytes(rb))
        // One download of the chunk both wanted (read-ahead may fetch what follows it).
        XCTAssertEqual(f.provider.reads.filter { $0.1.contains(300_000) }.count, 1)
        d.closeFile(h1); d.closeFile(h2)
    }

    func testARemoteChangeUnderAnOpenFileIsDetectedNotMixed() async throws {
        let f = try LocalFixture()
        try f.write("c.bin", randomData(1 << 20, seed: 1))
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        let (h, _) = try d.openFile(ItemIdentifier("/c.bin"))
        // A random read (no read-ahead), so most of the old version is not cached yet.
        _ = try await d.read(handle: h, offset: 500_000, size: 4096)
        try f.write("c.bin", randomData(1 << 20, seed: 2))
        do {
            _ = try await d.read(handle: h, offset: 900_000, size: 4096)
            XCTFail("a read across a remote change must fail")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .versionChanged)
        }
        d.closeFile(h)
        // Reopened, the new content is served.
        let (h2, keep) = try d.openFile(ItemIdentifier("/c.bin"))
        XCTAssertFalse(keep, "a new version must not keep the kernel's page cache")
        let r = try await d.read(handle: h2, offset: 900_000, size: 4096)
        XCTAssertEqual(bytes(r), randomData(1 << 20, seed: 2).subdata(in: 900_000..<904_096))
        d.closeFile(h2)
    }

    func testEvictionIsLeastRecentlyUsedFirstAndSparesOpenFiles() async throws {
        let f = try LocalFixture()
        for i in 0..<4 { try f.write("f\(i).bin", randomData(1 << 20, seed: UInt64(i))) }
        let d = try f.makeDomain(limit: 2 << 20 + 1000)
        _ = try await d.children(of: .rootContainer)
        let (open0, _) = try d.openFile(ItemIdentifier("/f0.bin"))
        _ = try await d.read(handle: open0, offset: 0, size: 1 << 20)
        for i in 1..<4 {
            let (h, _) = try d.openFile(ItemIdentifier("/f\(i).bin"))
            _ = try await d.read(handle: h, offset: 0, size: 1 << 20)
            d.closeFile(h)
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        d.eviction.evictIfNeeded()
        XCTAssertEqual(d.state(of: ItemIdentifier("/f0.bin")), "materialized", "open file evicted")
        XCTAssertEqual(d.state(of: ItemIdentifier("/f1.bin")), "placeholder", "least recently used not evicted")
        XCTAssertEqual(d.state(of: ItemIdentifier("/f3.bin")), "materialized", "most recent evicted")
        d.closeFile(open0)
        let (files, _) = d.shutdown(keepContent: false)
        XCTAssertGreaterThan(files, 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: f.cacheDir.appendingPathComponent("content").path)
        XCTAssertEqual(left, [])
    }
}

final class ListRootAheadTests: XCTestCase {
    func testTheRootIsListedBeforeAnyoneAsks() async throws {
        let f = try LocalFixture()
        try f.write("a.txt", Data("hello".utf8))
        let d = try f.makeDomain()
        _ = try await d.connect()
        XCTAssertNil(d.cachedItem(ItemIdentifier("/a.txt")), "nothing listed yet")
        _ = await d.listRootAhead()?.result
        XCTAssertEqual(d.cachedItem(ItemIdentifier("/a.txt"))?.size, 5)
        // The first readdir is served from what was listed ahead: no second enumeration.
        _ = try await d.children(of: .rootContainer)
        XCTAssertEqual(f.provider.enumerations(of: .rootContainer), 1)
    }
}

final class BadHandleTests: XCTestCase {
    /// A handle the mount never gave out (or already released) is EBADF at the bridge, as for
    /// any file system: not EINVAL, which says the arguments were malformed.
    func testAnUnknownHandleIsBadHandleAndMapsToEBADF() async throws {
        let f = try LocalFixture()
        let d = try f.makeDomain()
        _ = try await d.connect()
        do {
            _ = try await d.read(handle: 987_654, offset: 0, size: 10)
            XCTFail("a read through an unknown handle succeeded")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .badHandle)
            XCTAssertEqual(ErrnoMapping.errno(for: e), EBADF)
        }
    }
}
