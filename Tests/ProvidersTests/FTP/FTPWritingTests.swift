import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// The FTP provider's write side against a real pyftpdlib: STOR-then-rename uploads with
/// preconditions, MKD, RMD, DELE, RNFR/RNTO, MFMT.
final class FTPWritingTests: XCTestCase {
    private var server: FTPTestServer!
    private var provider: FTPProvider!
    private var base: ItemIdentifier!
    private var folder: URL!

    override func setUp() async throws {
        server = try FTPServers.shared.server("plain", .init())
        provider = try FTPTest.provider(server.url())
        let name = "w-\(UUID().uuidString.prefix(8))"
        base = ItemIdentifier("/" + name)
        folder = server.documentRoot.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    private func id(_ relative: String) -> ItemIdentifier { ItemIdentifier(base.rawValue + "/" + relative) }

    private func served(_ relative: String) -> String? {
        DirectorySeeding.contents(folder, relative).map { String(decoding: $0, as: UTF8.self) }
    }

    private func seed(_ relative: String, _ text: String) throws {
        try DirectorySeeding.seed(folder, files: [relative: Data(text.utf8)], folders: [])
    }

    @discardableResult
    private func upload(_ relative: String, _ text: String, _ precondition: UploadPrecondition) async throws -> Item {
        try await provider.upload(id(relative), from: FTPTest.source(Data(text.utf8), self), precondition: precondition)
    }

    /// No upload temporary is left anywhere in the test folder.
    private func assertNoTemporaries(file: StaticString = #filePath, line: UInt = #line) {
        let all = FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []
        XCTAssertEqual(all.filter { $0.contains(".favfs-upload-") }, [], file: file, line: line)
    }

    // MARK: upload

    func testUploadNewFileAndItsVersionAgreesWithListingAndStat() async throws {
        let item = try await upload("new.txt", "brand new\n", .mustNotExist)
        XCTAssertEqual(served("new.txt"), "brand new\n")
        XCTAssertEqual(item.identifier, id("new.txt"))
        XCTAssertEqual(item.kind, .file)
        XCTAssertEqual(item.size, 10)
        XCTAssertNotNil(item.version)
        let stat = try await provider.item(for: id("new.txt"))
        let listed = try await provider.enumerateAll(in: base)
        XCTAssertEqual(stat, item)
        XCTAssertEqual(listed, [item])
        assertNoTemporaries()
    }

    func testMustNotExistOnAnExistingFileIsExists() async throws {
        try seed("there.txt", "original\n")
        await FTPTest.expectError(.exists) { try await self.upload("there.txt", "intruder\n", .mustNotExist) }
        XCTAssertEqual(served("there.txt"), "original\n")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("dir"), withIntermediateDirectories: true)
        await FTPTest.expectError(.exists) { try await self.upload("dir", "x", .mustNotExist) }
        assertNoTemporaries()
    }

    func testMustMatchCurrentReplacesAndGivesANewVersion() async throws {
        try seed("doc.txt", "first\n")
        let current = try await provider.item(for: id("doc.txt"))
        // Same size, within the same second as the seed's rename: the version still changes (unique=).
        let replaced = try await upload("doc.txt", "secnd\n", .mustMatch(current.version!))
        XCTAssertEqual(served("doc.txt"), "secnd\n")
        XCTAssertNotEqual(replaced.version, current.version)
        let again = try await upload("doc.txt", "third!\n", .mustMatch(replaced.version!))
        XCTAssertEqual(served("doc.txt"), "third!\n")
        let stat = try await provider.item(for: id("doc.txt"))
        XCTAssertEqual(stat.version, again.version)
        assertNoTemporaries()
    }

    func testMustMatchStaleIsVersionChangedAndOverwritesNothing() async throws {
        try seed("doc.txt", "first\n")
        let old = try await provider.item(for: id("doc.txt"))
        try DirectorySeeding.overwrite(folder, "doc.txt", with: Data("theirs\n".utf8))
        await FTPTest.expectError(.versionChanged) { try await self.upload("doc.txt", "mine\n", .mustMatch(old.version!)) }
        XCTAssertEqual(served("doc.txt"), "theirs\n")
        // Gone meanwhile: also a conflict.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("doc.txt"))
        await FTPTest.expectError(.versionChanged) { try await self.upload("doc.txt", "mine\n", .mustMatch(old.version!)) }
        XCTAssertNil(served("doc.txt"))
        assertNoTemporaries()
    }

    func testNoPreconditionCreatesAndReplaces() async throws {
        try await upload("free.txt", "one\n", .none)
        XCTAssertEqual(served("free.txt"), "one\n")
        try await upload("free.txt", "two, longer\n", .none)
        XCTAssertEqual(served("free.txt"), "two, longer\n")
        try await upload("empty", "", .none)
        XCTAssertEqual(served("empty"), "")
        assertNoTemporaries()
    }

    func testUploadIntoAMissingFolderIsNotFound() async throws {
        await FTPTest.expectError(.notFound) { try await self.upload("missing/file.txt", "x", .mustNotExist) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("missing").path))
    }

    func testALargeUploadStreams() async throws {
        var data = Data(count: 6 * 1024 * 1024 + 123)
        data.withUnsafeMutableBytes { raw in for i in 0..<raw.count { raw[i] = UInt8((i * 31) & 0xff) } }
        let item = try await provider.upload(id("big.bin"), from: FTPTest.source(data, self), precondition: .mustNotExist)
        XCTAssertEqual(item.size, Int64(data.count))
        XCTAssertEqual(DirectorySeeding.contents(folder, "big.bin"), data)
        let sink = FTPTest.Sink()
        let got = try await provider.readContents(of: item, range: 3_000_000..<3_100_000, into: sink.sink)
        XCTAssertEqual(got, 3_000_000..<3_100_000)
        XCTAssertEqual(sink.contents.subdata(in: 3_000_000..<3_100_000), data.subdata(in: 3_000_000..<3_100_000))
    }

    func testAwkwardNamesAreWritable() async throws {
        for (i, name) in FTPTest.awkwardNames.enumerated() {
            let folderItem = try await provider.createFolder(id(name))
            XCTAssertEqual(folderItem.kind, .folder, name)
            let file = try await upload("\(name)/\(name)", "text \(i)\n", .mustNotExist)
            XCTAssertEqual(served("\(name)/\(name)"), "text \(i)\n", name)
            let listed = try await provider.enumerateAll(in: id(name))
            XCTAssertEqual(listed, [file], name)
            let moved = try await provider.move(file, to: id("\(name)/\(name) moved"), replacing: false)
            XCTAssertEqual(served("\(name)/\(name) moved"), "text \(i)\n", name)
            XCTAssertEqual(moved.version, file.version, name)
            try await provider.delete(moved)
            try await provider.delete(folderItem)
            XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path), name)
        }
        assertNoTemporaries()
    }

    // MARK: folders

    func testCreateFolder() async throws {
        let made = try await provider.createFolder(id("made"))
        XCTAssertEqual(made.kind, .folder)
        XCTAssertEqual(made.identifier, id("made"))
        var isDir: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("made").path, isDirectory: &isDir) && isDir.boolValue)
        await FTPTest.expectError(.exists) { try await self.provider.createFolder(self.id("made")) }
        try seed("file", "x")
        await FTPTest.expectError(.exists) { try await self.provider.createFolder(self.id("file")) }
        await FTPTest.expectError(.notFound) { try await self.provider.createFolder(self.id("no/such/parent")) }
    }

    // MARK: delete

    func testDelete() async throws {
        try seed("gone.txt", "bye")
        try seed("full/inside.txt", "x")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("empty"), withIntermediateDirectories: true)
        try await provider.delete(try await provider.item(for: id("gone.txt")))
        XCTAssertNil(served("gone.txt"))
        try await provider.delete(try await provider.item(for: id("empty")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("empty").path))
        let full = try await provider.item(for: id("full"))
        let error = await FTPTest.expectError(.notEmpty) { try await self.provider.delete(full) }
        XCTAssertEqual(error?.status, 550)
        XCTAssertEqual(served("full/inside.txt"), "x")
        await FTPTest.expectError(.notFound) { try await self.provider.delete(Item(identifier: self.id("never"), kind: .file)) }
        await FTPTest.expectError(.notFound) { try await self.provider.delete(Item(identifier: self.id("never"), kind: .folder)) }
    }

    // MARK: move

    func testMoveFilesAndFolders() async throws {
        try seed("a.txt", "A")
        try seed("dir/inner.txt", "I")
        let a = try await provider.item(for: id("a.txt"))
        let moved = try await provider.move(a, to: id("dir/b.txt"), replacing: false)
        XCTAssertEqual(moved.identifier, id("dir/b.txt"))
        XCTAssertEqual(moved.version, a.version)
        XCTAssertNil(served("a.txt"))
        XCTAssertEqual(served("dir/b.txt"), "A")
        let dir = try await provider.item(for: id("dir"))
        let movedDir = try await provider.move(dir, to: id("renamed"), replacing: false)
        XCTAssertEqual(movedDir.kind, .folder)
        XCTAssertEqual(served("renamed/inner.txt"), "I")
        XCTAssertEqual(served("renamed/b.txt"), "A")
    }

    func testMoveOntoAnExistingItem() async throws {
        try seed("src.txt", "source")
        try seed("dst.txt", "destination")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("dstdir"), withIntermediateDirectories: true)
        let src = try await provider.item(for: id("src.txt"))
        await FTPTest.expectError(.exists) { try await self.provider.move(src, to: self.id("dst.txt"), replacing: false) }
        await FTPTest.expectError(.exists) { try await self.provider.move(src, to: self.id("dstdir"), replacing: false) }
        XCTAssertEqual(served("dst.txt"), "destination")
        XCTAssertEqual(served("src.txt"), "source")
        let replaced = try await provider.move(src, to: id("dst.txt"), replacing: true)
        XCTAssertEqual(served("dst.txt"), "source")
        XCTAssertNil(served("src.txt"))
        XCTAssertEqual(replaced.size, 6)
        await FTPTest.expectError(.notFound) { try await self.provider.move(src, to: self.id("again.txt"), replacing: false) }
    }

    // MARK: times and links

    func testSetModifiedWithMFMT() async throws {
        try seed("t.txt", "time")
        let item = try await provider.setModified(id("t.txt"), to: 1_500_000_000.75)
        XCTAssertEqual(item.modified, 1_500_000_000)
        let attrs = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("t.txt").path)
        XCTAssertEqual((attrs[.modificationDate] as! Date).timeIntervalSince1970, 1_500_000_000, accuracy: 0.001)
        let listed = try await provider.enumerateAll(in: base)
        XCTAssertEqual(listed, [item])
        await FTPTest.expectError(.notFound) { try await self.provider.setModified(self.id("nope"), to: 0) }
    }

    func testSymlinksAreNotSupported() async throws {
        await FTPTest.expectError(.notSupported) { try await self.provider.createSymlink(self.id("link"), target: "x") }
    }
}
