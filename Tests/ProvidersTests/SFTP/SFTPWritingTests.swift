import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// The SFTP provider's write side against a real OpenSSH sshd: uploads with every precondition
/// (through a temporary name), folders, delete, rename with and without replacing, symlinks, mtimes.
final class SFTPWritingTests: XCTestCase {
    private var server: SSHServer!
    private var p: SFTPProvider!
    private var area = ""
    private var dir: URL!

    override func setUpWithError() throws {
        server = try SFTPTestServer.shared()
        (area, dir) = try SFTPTestServer.area(server, "write")
        p = try SFTPTestServer.provider(server)
    }

    private func id(_ name: String) -> ItemIdentifier { ItemIdentifier("/\(area)/\(name)") }
    private func served(_ name: String) -> String? {
        (try? Data(contentsOf: dir.appendingPathComponent(name))).map { String(decoding: $0, as: UTF8.self) }
    }
    private func upload(_ name: String, _ text: String, _ pre: UploadPrecondition) async throws -> Item {
        try await p.upload(id(name), from: SFTPTestServer.source(Data(text.utf8), self), precondition: pre)
    }
    private func listed(_ name: String) async throws -> Item? {
        try await p.enumerateAll(in: ItemIdentifier("/\(area)")).first { $0.name == name }
    }
    private func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(SFTPProvider.temporaryPrefix) }
    }

    func testUploadPreconditionsAndVersions() async throws {
        let created = try await upload("new file", "one", .mustNotExist)
        XCTAssertEqual(served("new file"), "one")
        XCTAssertEqual(created.size, 3)
        let fromListing = try await listed("new file")
        XCTAssertEqual(fromListing?.version, created.version, "upload and listing must agree on the version")
        let fromStat = try await p.item(for: id("new file"))
        XCTAssertEqual(fromStat.version, created.version)

        await SFTPTestServer.expectError(.exists) { _ = try await self.upload("new file", "two", .mustNotExist) }
        XCTAssertEqual(served("new file"), "one")

        // Same size, same second: the new content still gets a new version.
        let replaced = try await upload("new file", "two", .mustMatch(created.version!))
        XCTAssertEqual(served("new file"), "two")
        XCTAssertNotEqual(replaced.version, created.version)
        let relisted = try await listed("new file")
        XCTAssertEqual(relisted?.version, replaced.version)

        await SFTPTestServer.expectError(.versionChanged) { _ = try await self.upload("new file", "stale", .mustMatch(created.version!)) }
        XCTAssertEqual(served("new file"), "two")
        await SFTPTestServer.expectError(.versionChanged) { _ = try await self.upload("never there", "x", .mustMatch("s1-t1")) }
        XCTAssertNil(served("never there"))

        _ = try await upload("new file", "forced over it", .none)
        XCTAssertEqual(served("new file"), "forced over it")
        _ = try await upload("fresh", "made by none", .none)
        XCTAssertEqual(served("fresh"), "made by none")
        XCTAssertEqual(try leftovers(), [], "no temporary files stay behind")
    }

    func testUploadOfAwkwardNamesAndIntoAMissingFolder() async throws {
        for name in SFTPProviderTests.awkwardNames {
            let item = try await upload(name, "content of \(name)", .mustNotExist)
            XCTAssertEqual(served(name), "content of \(name)")
            XCTAssertEqual(item.identifier, id(name))
        }
        await SFTPTestServer.expectError(.notFound) { _ = try await self.upload("no/such/folder.txt", "x", .mustNotExist) }
        XCTAssertEqual(try leftovers(), [])
    }

    func testLargeUploadStreams() async throws {
        let data = Data((0..<3_000_001).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let item = try await p.upload(id("big.bin"), from: SFTPTestServer.source(data, self), precondition: .mustNotExist)
        XCTAssertEqual(item.size, 3_000_001)
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("big.bin")), data)
    }

    func testFoldersAndDelete() async throws {
        let folder = try await p.createFolder(id("new folder"))
        XCTAssertEqual(folder.kind, .folder)
        var isDir: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("new folder").path, isDirectory: &isDir) && isDir.boolValue)
        await SFTPTestServer.expectError(.exists) { _ = try await self.p.createFolder(self.id("new folder")) }
        await SFTPTestServer.expectError(.notFound) { _ = try await self.p.createFolder(self.id("missing/child")) }

        let inner = try await upload("new folder/inner", "x", .mustNotExist)
        await SFTPTestServer.expectError(.notEmpty) { try await self.p.delete(folder) }
        XCTAssertEqual(served("new folder/inner"), "x")
        try await p.delete(inner)
        XCTAssertNil(served("new folder/inner"))
        try await p.delete(folder)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("new folder").path))
        await SFTPTestServer.expectError(.notFound) { try await self.p.delete(inner) }
        await SFTPTestServer.expectError(.notFound) { try await self.p.delete(folder) }
    }

    func testMoveReplacingOnlyWhenAsked() async throws {
        let a = try await upload("a", "A", .mustNotExist)
        _ = try await upload("b", "B", .mustNotExist)
        let moved = try await p.move(a, to: id("c it's"), replacing: false)
        XCTAssertEqual(moved.identifier, id("c it's"))
        XCTAssertEqual(moved.version, a.version, "a rename keeps size and mtime")
        let movedListed = try await listed("c it's")
        XCTAssertEqual(movedListed?.version, moved.version)
        XCTAssertEqual(served("c it's"), "A")
        XCTAssertNil(served("a"))

        await SFTPTestServer.expectError(.exists) { _ = try await self.p.move(moved, to: self.id("b"), replacing: false) }
        XCTAssertEqual(served("b"), "B")
        XCTAssertEqual(served("c it's"), "A")
        _ = try await p.move(moved, to: id("b"), replacing: true)
        XCTAssertEqual(served("b"), "A")
        XCTAssertNil(served("c it's"))
        await SFTPTestServer.expectError(.notFound) { _ = try await self.p.move(moved, to: self.id("z"), replacing: false) }

        try FileManager.default.createDirectory(at: dir.appendingPathComponent("d/sub"), withIntermediateDirectories: true)
        try Data("deep".utf8).write(to: dir.appendingPathComponent("d/sub/deep"))
        let d = try await p.item(for: id("d"))
        let movedDir = try await p.move(d, to: id("renamed dir"), replacing: false)
        XCTAssertEqual(movedDir.kind, .folder)
        XCTAssertEqual(served("renamed dir/sub/deep"), "deep")
    }

    func testSymlinksAndModificationTimes() async throws {
        _ = try await upload("f", "f", .mustNotExist)
        let link = try await p.createSymlink(id("link"), target: "f")
        XCTAssertEqual(link.kind, .symlink)
        XCTAssertEqual(link.symlinkTarget, "f")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: dir.appendingPathComponent("link").path), "f")
        let odd = try await p.createSymlink(id("odd link"), target: "../some where/it's \"x\"")
        XCTAssertEqual(odd.symlinkTarget, "../some where/it's \"x\"")
        await SFTPTestServer.expectError(.exists) { _ = try await self.p.createSymlink(self.id("link"), target: "g") }

        let movedLink = try await p.move(link, to: id("link2"), replacing: false)
        XCTAssertEqual(movedLink.kind, .symlink)
        XCTAssertEqual(movedLink.symlinkTarget, "f")
        try await p.delete(movedLink)
        XCTAssertEqual(served("f"), "f", "deleting a symlink leaves its target")

        let item = try await p.setModified(id("f"), to: 1_600_000_000.7)
        XCTAssertEqual(item.modified, 1_600_000_000)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("f").path)[.modificationDate] as? Date,
                       Date(timeIntervalSince1970: 1_600_000_000))
        let fListed = try await listed("f")
        XCTAssertEqual(fListed?.version, item.version)
        let folder = try await p.createFolder(id("dated"))
        let datedFolder = try await p.setModified(folder.identifier, to: 1_500_000_000)
        XCTAssertEqual(datedFolder.kind, .folder)
        XCTAssertEqual(datedFolder.modified, 1_500_000_000)
        await SFTPTestServer.expectError(.notFound) { _ = try await self.p.setModified(self.id("nothing"), to: 1) }
    }
}
