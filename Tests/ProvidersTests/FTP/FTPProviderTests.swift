import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// The FTP provider's read side against a real pyftpdlib with MLSD/MLST: listings, stats,
/// ranged and pinned reads, awkward names, errors.
final class FTPProviderTests: XCTestCase {
    private var server: FTPTestServer!
    private var provider: FTPProvider!
    /// This test's folder below the remote (`/files/<test>` on the server).
    private var base: ItemIdentifier!
    private var folder: URL!

    override func setUp() async throws {
        server = try FTPServers.shared.server("plain", .init())
        provider = try FTPTest.provider(server.url())
        let name = "t-\(UUID().uuidString.prefix(8))"
        base = ItemIdentifier("/" + name)
        folder = server.documentRoot.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    private func write(_ relative: String, _ data: Data, modified: Date? = nil) throws {
        let url = folder.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        if let modified { try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path) }
    }

    private func id(_ relative: String) -> ItemIdentifier { ItemIdentifier(base.rawValue + "/" + relative) }

    // MARK: listing

    func testListsAFolderOf1050Files() async throws {
        for i in 0..<1050 { try write("many/file-\(String(format: "%04d", i)).txt", Data(repeating: UInt8(i % 256), count: i % 7)) }
        let items = try await provider.enumerateAll(in: id("many"))
        XCTAssertEqual(items.count, 1050)
        XCTAssertEqual(Set(items.map(\.name)).count, 1050)
        for item in items {
            let i = Int(item.name.dropFirst(5).prefix(4))!
            XCTAssertEqual(item.size, Int64(i % 7), item.name)
            XCTAssertEqual(item.kind, .file)
            XCTAssertEqual(item.parent, id("many"))
        }
    }

    func testListingKindsSizesAndTimes() async throws {
        let when = Date(timeIntervalSince1970: 1_700_000_000)
        try write("f.txt", Data("hello".utf8), modified: when)
        try write("empty", Data())
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("sub/deeper"), withIntermediateDirectories: true)
        let items = try await provider.enumerateAll(in: base).sorted { $0.name < $1.name }
        XCTAssertEqual(items.map(\.name), ["empty", "f.txt", "sub"])
        XCTAssertEqual(items.map(\.kind), [.file, .file, .folder])
        XCTAssertEqual(items[1].size, 5)
        XCTAssertEqual(items[1].modified, 1_700_000_000)
        XCTAssertNotNil(items[1].version)
        XCTAssertEqual(items[0].size, 0)
        let page = try await provider.enumerateItems(in: base, page: nil)
        XCTAssertNil(page.nextPage)
    }

    func testTheRootAndItsItem() async throws {
        let root = try await provider.item(for: .rootContainer)
        XCTAssertEqual(root.kind, .folder)
        let listed = try await provider.enumerateAll(in: .rootContainer)
        XCTAssertTrue(listed.contains { $0.identifier == base && $0.kind == .folder })
    }

    func testUploadTemporariesAreNotListed() async throws {
        try write(".favfs-upload-0123456789ab", Data("half".utf8))
        try write(".hidden", Data("x".utf8))
        let names = try await provider.enumerateAll(in: base).map(\.name)
        XCTAssertEqual(names, [".hidden"])
    }

    // MARK: one item

    func testItemForFileAndFolderAgreesWithTheListing() async throws {
        try write("dir/file.bin", Data(repeating: 7, count: 1234))
        let listed = try await provider.enumerateAll(in: id("dir"))
        let file = try await provider.item(for: id("dir/file.bin"))
        XCTAssertEqual(listed, [file])
        XCTAssertEqual(file.size, 1234)
        let folderItem = try await provider.item(for: id("dir"))
        XCTAssertEqual(folderItem.kind, .folder)
        let fromParent = try await provider.enumerateAll(in: base)
        XCTAssertEqual(fromParent, [folderItem])
    }

    func testMissingIsNotFound() async throws {
        let e1 = await FTPTest.expectError(.notFound) { try await self.provider.item(for: self.id("nope")) }
        XCTAssertEqual(e1?.status, 550)
        XCTAssertEqual(e1?.path, id("nope").rawValue)
        XCTAssertEqual(e1?.remote, "ftp://favfs@127.0.0.1:\(server.port)/files/")
        await FTPTest.expectError(.notFound) { try await self.provider.item(for: self.id("nope/deeper")) }
        await FTPTest.expectError(.notFound) { try await self.provider.enumerateAll(in: self.id("nope")) }
        let ghost = Item(identifier: id("nope.txt"), kind: .file, size: 10)
        await FTPTest.expectError(.notFound) { try await self.provider.readContents(of: ghost, range: 0..<10, into: FTPTest.Sink().sink) }
        try write("plain", Data("x".utf8))
        await FTPTest.expectError(.notAFolder) { try await self.provider.enumerateAll(in: self.id("plain")) }
    }

    // MARK: reading

    func testRangedReads() async throws {
        let data = Data((0..<1000).map { UInt8($0 % 251) })
        try write("data.bin", data)
        let item = try await provider.item(for: id("data.bin"))
        var unpinned = item
        unpinned.version = nil
        for candidate in [item, unpinned] {
            for range: Range<Int64> in [0..<100, 400..<650, 900..<1000, 950..<1200, 0..<1000, 0..<5000] {
                let sink = FTPTest.Sink()
                let got = try await provider.readContents(of: candidate, range: range, into: sink.sink)
                let end = min(range.upperBound, 1000)
                XCTAssertEqual(got, range.lowerBound..<end, "\(range) version \(candidate.version ?? "none")")
                let written = sink.contents
                // The bytes sit at their own offsets (pwrite), nothing before them.
                XCTAssertEqual(Int64(written.count), end)
                XCTAssertEqual(written.subdata(in: Int(range.lowerBound)..<Int(end)), data.subdata(in: Int(range.lowerBound)..<Int(end)))
            }
            let past = try await provider.readContents(of: candidate, range: 1000..<1100, into: FTPTest.Sink().sink)
            XCTAssertTrue(past.isEmpty)
            let farPast = try await provider.readContents(of: candidate, range: 5000..<6000, into: FTPTest.Sink().sink)
            XCTAssertTrue(farPast.isEmpty)
        }
    }

    func testEmptyAndSmallFiles() async throws {
        try write("empty", Data())
        try write("small", Data("small file\n".utf8))
        let empty = try await provider.item(for: id("empty"))
        let got = try await provider.readContents(of: empty, range: 0..<4096, into: FTPTest.Sink().sink)
        XCTAssertTrue(got.isEmpty)
        let small = try await provider.item(for: id("small"))
        let sink = FTPTest.Sink()
        let smallRange = try await provider.readContents(of: small, range: 0..<4096, into: sink.sink)
        XCTAssertEqual(smallRange, 0..<11)
        XCTAssertEqual(String(decoding: sink.contents, as: UTF8.self), "small file\n")
    }

    func testPinnedReadsDetectAChangedFile() async throws {
        try write("v.txt", Data("version one, long enough\n".utf8), modified: Date().addingTimeInterval(-3600))
        let item = try await provider.item(for: id("v.txt"))
        try DirectorySeeding.overwrite(folder, "v.txt", with: Data("version two, long enough\n".utf8))
        // Same size, other mtime: both a partial read and a read to the end refuse.
        for range: Range<Int64> in [0..<5, 0..<100, 5..<100] {
            let sink = FTPTest.Sink()
            await FTPTest.expectError(.versionChanged) { try await self.provider.readContents(of: item, range: range, into: sink.sink) }
        }
        let fresh = try await provider.item(for: id("v.txt"))
        XCTAssertNotEqual(fresh.version, item.version)
        let sink = FTPTest.Sink()
        _ = try await provider.readContents(of: fresh, range: 0..<100, into: sink.sink)
        XCTAssertEqual(String(decoding: sink.contents, as: UTF8.self), "version two, long enough\n")
    }

    func testAFileReplacedByRenameInTheSameSecondHasANewVersion() async throws {
        // unique= (device and inode) is part of the version, so same size and same second still differ.
        try write("r.txt", Data("aaaa".utf8))
        let before = try await provider.item(for: id("r.txt"))
        let replacement = folder.appendingPathComponent("r.tmp")
        try Data("bbbb".utf8).write(to: replacement)
        let attrs = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("r.txt").path)
        try FileManager.default.setAttributes([.modificationDate: attrs[.modificationDate]!], ofItemAtPath: replacement.path)
        XCTAssertEqual(rename(replacement.path, folder.appendingPathComponent("r.txt").path), 0)
        let after = try await provider.item(for: id("r.txt"))
        XCTAssertEqual(after.size, before.size)
        XCTAssertEqual(after.modified, before.modified)
        XCTAssertNotEqual(after.version, before.version)
    }

    func testConcurrentRangedReadsOfOneFile() async throws {
        var data = Data(count: 2 * 1024 * 1024)
        data.withUnsafeMutableBytes { raw in for i in 0..<raw.count { raw[i] = UInt8((i &* 7) & 0xff) } }
        try write("par.bin", data)
        let item = try await provider.item(for: id("par.bin"))
        let sink = FTPTest.Sink()
        let chunk: Int64 = 256 * 1024
        let provider = self.provider!
        let target = sink.sink
        try await withThrowingTaskGroup(of: Range<Int64>.self) { group in
            for start in stride(from: Int64(0), to: Int64(data.count), by: Int(chunk)) {
                group.addTask { try await provider.readContents(of: item, range: start..<(start + chunk), into: target) }
            }
            var total: Int64 = 0
            for try await got in group { total += Int64(got.count) }
            XCTAssertEqual(total, Int64(data.count))
        }
        XCTAssertEqual(sink.contents, data)
    }

    // MARK: awkward names

    func testAwkwardNamesAsFilesAndFolders() async throws {
        for (i, name) in FTPTest.awkwardNames.enumerated() {
            try write("files/\(name)", Data("content \(i)".utf8))
            try write("folders/\(name)/inner", Data("inner \(i)".utf8))
        }
        let files = try await provider.enumerateAll(in: id("files"))
        XCTAssertEqual(Set(files.map(\.name)), Set(FTPTest.awkwardNames))
        let folders = try await provider.enumerateAll(in: id("folders"))
        XCTAssertEqual(Set(folders.map(\.name)), Set(FTPTest.awkwardNames))
        XCTAssertTrue(folders.allSatisfy { $0.kind == .folder })
        for (i, name) in FTPTest.awkwardNames.enumerated() {
            let file = try await provider.item(for: id("files/\(name)"))
            XCTAssertEqual(file, files.first { $0.name == name }, name)
            let sink = FTPTest.Sink()
            _ = try await provider.readContents(of: file, range: 2..<100, into: sink.sink)
            XCTAssertEqual(sink.contents.dropFirst(2), Data("content \(i)".utf8).dropFirst(2), name)
            let inner = try await provider.enumerateAll(in: id("folders/\(name)"))
            XCTAssertEqual(inner.map(\.name), ["inner"], name)
            let innerItem = try await provider.item(for: id("folders/\(name)/inner"))
            XCTAssertEqual(innerItem, inner.first, name)
            let folderItem = try await provider.item(for: id("folders/\(name)"))
            XCTAssertEqual(folderItem.kind, .folder, name)
        }
    }

    // MARK: errors

    func testWrongPasswordIsDenied() async throws {
        let wrong = try FTPTest.provider(server.url(), secret: "wrong")
        let error = await FTPTest.expectError(.denied) { try await wrong.enumerateAll(in: .rootContainer) }
        XCTAssertEqual(error?.status, 530)
        XCTAssertTrue(error?.detail.contains("login") == true, "\(String(describing: error))")
    }

    func testServerDownIsUnreachable() async throws {
        let down = try FTPTest.provider("ftp://favfs@127.0.0.1:\(try FreePort.next())/files/")
        let error = await FTPTest.expectError(.unreachable) { try await down.item(for: ItemIdentifier("/x")) }
        XCTAssertTrue(error?.description.contains("127.0.0.1") == true, "\(String(describing: error))")
        XCTAssertTrue(error?.isTransient == true)
    }

    func testUnknownOptionIsRefused() throws {
        XCTAssertThrowsError(try FTPTest.provider(server.url(), options: ["tls_verfy": "false"])) { error in
            XCTAssertEqual((error as? ProviderError)?.kind, .invalidName)
        }
        XCTAssertThrowsError(try FTPTest.provider(server.url(), options: ["ca_certificate": "/nonexistent.pem"]))
    }

    func testCapabilities() {
        XCTAssertEqual(provider.capabilities, [.write, .rename, .delete, .createFolder, .rangedReads, .partialReadsCostAConnection,
                                               .connectionsCostALogin])
    }
}
