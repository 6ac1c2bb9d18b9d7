import Foundation
import Testing
import FavFSCore
import Providers
import TestSupport

/// One set of cases, run against every provider and its real server on loopback: listing
/// (with paging), stat, ranged reads, awkward names and errors. Serialized: the servers are
/// shared and some cases seed a thousand files.
@Suite(.serialized)
struct ProviderConformanceTests {
    static let awkwardNames = TreeGenerator.awkwardNames

    @Test("lists every entry of a large folder, across pages", arguments: ConformanceTarget.all)
    func listsEveryPage(_ t: ConformanceTarget) async throws {
        try t.server.start()
        let area = t.area("paging")
        var files: [String: Data] = [:]
        for i in 0..<1_050 { files["\(area)/\(t.server.fileName(String(format: "f%04d", i)))"] = Data("\(i)".utf8) }
        try t.server.seed(files: files, folders: ["\(area)/sub1", "\(area)/sub2"])

        let pageSize = t.server.traits.pageSizeOption.map { [$0: "100"] } ?? [:]
        let provider = try t.provider(extraOptions: pageSize)
        var pages = 0
        var items: [Item] = []
        var page: Page? = nil
        repeat {
            let p = try await provider.enumerateItems(in: Conformance.id(area), page: page)
            items += p.items
            page = p.nextPage
            pages += 1
        } while page != nil && pages < 1_000
        if !pageSize.isEmpty { #expect(pages >= 11, "page size 100 over 1,052 entries should take 11 pages, took \(pages)") }

        let byName = Dictionary(items.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(items.count == 1_052, "listed \(items.count) entries")
        #expect(byName.count == items.count, "a name was listed twice")
        for (path, data) in files {
            let name = String(path.split(separator: "/").last!)
            guard let item = byName[name] else { Issue.record("\(name) missing"); continue }
            #expect(item.kind == .file && item.size == Int64(data.count), "\(name): \(item.kind) \(item.size)")
            #expect(item.identifier == Conformance.id(path))
        }
        #expect(byName["sub1"]?.kind == .folder && byName["sub2"]?.kind == .folder)
    }

    @Test("stats files and folders; listing, stat and version agree", arguments: ConformanceTarget.all)
    func statsItems(_ t: ConformanceTarget) async throws {
        try t.server.start()
        let area = t.area("stat")
        let file = "\(area)/\(t.server.fileName("one"))"
        let data = Conformance.content(file, size: 70_001)
        try t.server.seed(files: [file: data, "\(area)/folder/\(t.server.fileName("inner"))": Data("x".utf8)], folders: ["\(area)/empty"])
        let provider = try t.provider()

        let item = try await provider.item(for: Conformance.id(file))
        #expect(item.kind == .file && item.size == 70_001)
        let folder = try await provider.item(for: Conformance.id("\(area)/folder"))
        #expect(folder.kind == .folder)
        let listed = try await provider.enumerateAll(in: Conformance.id(area))
        let fromListing = try #require(listed.first { $0.name == item.name })
        #expect(fromListing.version == item.version, "the listing's version \(fromListing.version ?? "nil") differs from the stat's \(item.version ?? "nil"): write-back would see false conflicts")
        #expect(fromListing.size == item.size)
        if let precision = t.server.traits.modifiedPrecision, let a = fromListing.modified, let b = item.modified {
            #expect(abs(a - b) <= precision, "mtimes from listing (\(a)) and stat (\(b)) differ")
        }
        if t.server.traits.listsEmptyFolders {
            #expect(listed.contains { $0.name == "empty" && $0.kind == .folder }, "an empty folder is not listed")
        }
    }

    @Test("missing items are not found", arguments: ConformanceTarget.all)
    func missingItems(_ t: ConformanceTarget) async throws {
        let provider = try t.provider()
        let area = t.area("missing")
        await Conformance.expectError([.notFound], "item(for:) of a missing file") {
            _ = try await provider.item(for: Conformance.id("\(area)/\(t.server.fileName("nope"))"))
        }
        await Conformance.expectError([.notFound], "listing a missing folder") {
            _ = try await provider.enumerateItems(in: Conformance.id("\(area)/nofolder"), page: nil)
        }
    }

    @Test("reads byte ranges at their offsets", arguments: ConformanceTarget.all)
    func rangedReads(_ t: ConformanceTarget) async throws {
        try t.server.start()
        let area = t.area("ranges")
        let path = "\(area)/\(t.server.fileName("data"))"
        let emptyPath = "\(area)/\(t.server.fileName("empty"))"
        let size = 300 * 1024 + 17
        let data = Conformance.content(path, size: size)
        try t.server.seed(files: [path: data, emptyPath: Data()], folders: [])
        let provider = try t.provider()
        let item = try await provider.item(for: Conformance.id(path))
        #expect(item.size == Int64(size))
        let s = Int64(size)
        for range in [0..<100, 1_000..<150_000, (s - 10)..<s, 131_072..<262_144] as [Range<Int64>] {
            let got = try await Conformance.read(provider, item, range)
            #expect(got == data[Int(range.lowerBound)..<Int(range.upperBound)], "range \(range) differs (\(got.count) bytes)")
        }
        let all = try await Conformance.read(provider, item, 0..<s)
        #expect(all == data, "the whole file differs")
        let empty = try await provider.item(for: Conformance.id(emptyPath))
        #expect(empty.size == 0 && empty.kind == .file)
    }

    /// Names starting with a dot are listed (a `.git` from another computer), except where the
    /// server leaves them out and nothing can ask for them (`traits.listsDotNames`).
    @Test("names starting with a dot are listed", arguments: ConformanceTarget.all)
    func dotNamesAreListed(_ t: ConformanceTarget) async throws {
        guard t.server.name != "favart" else { return }  // it stores images only
        try t.server.start()
        let area = t.area("dots")
        try t.server.seed(files: ["\(area)/plain": Data("p".utf8), "\(area)/.hidden": Data("h".utf8),
                                  "\(area)/.dir/inside": Data("i".utf8)], folders: [])
        let provider = try t.provider()
        let names = Set(try await provider.enumerateAll(in: Conformance.id(area)).map(\.name))
        #expect(names.contains("plain"))
        if t.server.traits.listsDotNames {
            #expect(names.isSuperset(of: [".hidden", ".dir"]), "\(t.server.name): listed \(names.sorted())")
        }
    }

    /// Whole files read one after another, as `cat` of a folder does. libcurl 7.88 opened an
    /// FTP data connection on a reused control connection only a full poll wait (1 s) after
    /// the server's EPSV reply (vsftpd: 100 files of 1 MiB took 28–44 s, `curl` one by one
    /// 9 s). The bound is wide (a loaded machine); a stall per file is not within it.
    @Test("reads of many small files one after another do not stall", arguments: ConformanceTarget.all)
    func readsOneAfterAnother(_ t: ConformanceTarget) async throws {
        try t.server.start()
        let area = t.area("one-after-another")
        var files: [String: Data] = [:]
        for i in 0..<20 {
            let path = "\(area)/\(t.server.fileName("f\(i)"))"
            files[path] = Conformance.content(path, size: 4096 + i)
        }
        try t.server.seed(files: files, folders: [])
        let provider = try t.provider()
        var items: [Item] = []
        for path in files.keys.sorted() { items.append(try await provider.item(for: Conformance.id(path))) }
        let started = Date()
        for (path, item) in zip(files.keys.sorted(), items) {
            let got = try await Conformance.read(provider, item, 0..<item.size)
            #expect(got == files[path], "\(path) differs")
        }
        let took = Date().timeIntervalSince(started)
        #expect(took < 10, "\(t.server.name): 20 reads of 4 KiB one after another took \(took) s")
    }

    @Test("awkward names round-trip as files and folders", arguments: ConformanceTarget.all)
    func awkwardNames(_ t: ConformanceTarget) async throws {
        try t.server.start()
        let area = t.area("names")
        var files: [String: Data] = [:]
        var folders: [String] = []
        for name in Self.awkwardNames where t.server.traits.keeps(name: name) {
            files["\(area)/\(t.server.fileName(name))"] = Data("content of \(name)\n".utf8)
            // Folder names without dots: some remotes infer folders from a missing extension.
            let folder = name.replacingOccurrences(of: ".", with: "_") + " dir"
            folders.append("\(area)/\(folder)")
            files["\(area)/\(folder)/\(t.server.fileName("inner " + name))"] = Data("inner \(name)".utf8)
        }
        try t.server.seed(files: files, folders: folders)
        let provider = try t.provider()
        let listed = Set(try await provider.enumerateAll(in: Conformance.id(area)).map(\.name))
        for (path, data) in files {
            let parts = path.split(separator: "/").map(String.init)
            #expect(listed.contains(parts[1]), "'\(parts[1])' is not listed")
            let item = try await provider.item(for: Conformance.id(path))
            let got = try await Conformance.read(provider, item, 0..<item.size)
            #expect(got == data, "'\(path)' reads \(got.count) bytes that differ")
            if parts.count == 3 {
                let inner = try await provider.enumerateAll(in: Conformance.id("\(parts[0])/\(parts[1])")).map(\.name)
                #expect(inner == [parts[2]], "folder '\(parts[1])' lists \(inner)")
            }
        }
    }

    @Test("a read pinned to a version fails when the remote changed", arguments: ConformanceTarget.all)
    func pinnedReadDetectsChange(_ t: ConformanceTarget) async throws {
        try t.server.start()
        let area = t.area("pinned")
        let path = "\(area)/\(t.server.fileName("changes"))"
        try t.server.seed(files: [path: Conformance.content(path, size: 4096)], folders: [])
        let provider = try t.provider()
        let item = try await provider.item(for: Conformance.id(path))
        guard item.version != nil else { return }  // nothing to pin to: documented per provider
        try t.server.overwrite(path, with: Conformance.content(path + "v2", size: 5000))
        await Conformance.expectError([.versionChanged], "reading a version that was replaced") {
            _ = try await Conformance.read(provider, item, 0..<4096)
        }
    }

    @Test("wrong credentials are denied", arguments: ConformanceTarget.all)
    func wrongCredentials(_ t: ConformanceTarget) async throws {
        try t.server.start()
        guard let remote = t.server.remoteWithWrongCredentials() else {
            #expect(!t.server.traits.hasAuthentication)
            return
        }
        let provider = try t.provider(remote)
        await Conformance.expectError([.denied], "listing with a wrong secret") {
            _ = try await provider.enumerateItems(in: .rootContainer, page: nil)
        }
    }

    @Test("a server that is down is unreachable, quickly", arguments: ConformanceTarget.all)
    func serverDown(_ t: ConformanceTarget) async throws {
        guard let remote = try t.server.remoteThatIsDown() else { return }
        let provider = try t.provider(remote)
        let start = Date()
        await Conformance.expectError([.unreachable, .timedOut], "listing a server that is down") {
            _ = try await provider.enumerateItems(in: .rootContainer, page: nil)
        }
        #expect(Date().timeIntervalSince(start) < 15)
    }
}
