import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// A server without MLSD, MLST and MFMT (pyftpdlib with them removed, so FEAT does not list
/// them and MLSD is answered 500): the provider parses LIST, stats through the parent's LIST
/// and refuses setModified. Anonymous logins are allowed, read-only.
final class FTPListFallbackTests: XCTestCase {
    private var server: FTPTestServer!
    private var provider: FTPProvider!
    private var base: ItemIdentifier!
    private var folder: URL!

    override func setUp() async throws {
        server = try FTPServers.shared.server("list", .init(machineListings: false, setModified: false, anonymous: true))
        provider = try FTPTest.provider(server.url())
        let name = "l-\(UUID().uuidString.prefix(8))"
        base = ItemIdentifier("/" + name)
        folder = server.documentRoot.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    private func id(_ relative: String) -> ItemIdentifier { ItemIdentifier(base.rawValue + "/" + relative) }

    func testListingThroughLIST() async throws {
        let when = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60 - 7200)
        for (i, name) in FTPTest.awkwardNames.enumerated() {
            try DirectorySeeding.seed(folder, files: ["files/\(name)": Data(repeating: 1, count: i)], folders: ["folders/\(name)"])
            try FileManager.default.setAttributes([.modificationDate: when], ofItemAtPath: folder.appendingPathComponent("files/\(name)").path)
        }
        try DirectorySeeding.seed(folder, files: ["old": Data("x".utf8)], folders: [])
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_262_304_000)],  // 2010-01-01
                                              ofItemAtPath: folder.appendingPathComponent("old").path)
        let files = try await provider.enumerateAll(in: id("files"))
        XCTAssertEqual(Set(files.map(\.name)), Set(FTPTest.awkwardNames))
        for (i, name) in FTPTest.awkwardNames.enumerated() {
            let item = files.first { $0.name == name }!
            XCTAssertEqual(item.kind, .file, name)
            XCTAssertEqual(item.size, Int64(i), name)
            // LIST has minutes.
            XCTAssertEqual(item.modified, when.timeIntervalSince1970, name)
            let stat = try await provider.item(for: id("files/\(name)"))
            XCTAssertEqual(stat, item, name)
        }
        let folders = try await provider.enumerateAll(in: id("folders"))
        XCTAssertEqual(Set(folders.map(\.name)), Set(FTPTest.awkwardNames))
        XCTAssertTrue(folders.allSatisfy { $0.kind == .folder })
        let old = try await provider.item(for: id("old"))
        XCTAssertEqual(old.modified, 1_262_304_000)  // a year, no time: the day
        let root = try await provider.item(for: .rootContainer)
        XCTAssertEqual(root.kind, .folder)
        await FTPTest.expectError(.notFound) { try await self.provider.item(for: self.id("nope")) }
        await FTPTest.expectError(.notFound) { try await self.provider.enumerateAll(in: self.id("nope")) }
    }

    func testReadsAndPinnedReads() async throws {
        let data = Data((0..<3000).map { UInt8($0 % 253) })
        try DirectorySeeding.seed(folder, files: ["d.bin": data, "tab\there": Data("tabbed\n".utf8)], folders: [])
        let item = try await provider.item(for: id("d.bin"))
        let sink = FTPTest.Sink()
        let got = try await provider.readContents(of: item, range: 1000..<2000, into: sink.sink)
        XCTAssertEqual(got, 1000..<2000)
        XCTAssertEqual(sink.contents.subdata(in: 1000..<2000), data.subdata(in: 1000..<2000))
        let past = try await provider.readContents(of: item, range: 3000..<4000, into: FTPTest.Sink().sink)
        XCTAssertTrue(past.isEmpty)
        let tabbed = try await provider.item(for: id("tab\there"))
        let tabSink = FTPTest.Sink()
        _ = try await provider.readContents(of: tabbed, range: 0..<100, into: tabSink.sink)
        XCTAssertEqual(String(decoding: tabSink.contents, as: UTF8.self), "tabbed\n")
        try DirectorySeeding.overwrite(folder, "d.bin", with: data)
        await FTPTest.expectError(.versionChanged) { try await self.provider.readContents(of: item, range: 0..<10, into: FTPTest.Sink().sink) }
    }

    func testWritesAndVersionsAgree() async throws {
        let created = try await provider.upload(id("n.txt"), from: FTPTest.source(Data("new\n".utf8), self), precondition: .mustNotExist)
        XCTAssertEqual(DirectorySeeding.contents(folder, "n.txt"), Data("new\n".utf8))
        let listed = try await provider.enumerateAll(in: base)
        XCTAssertEqual(listed, [created])
        await FTPTest.expectError(.exists) {
            try await self.provider.upload(self.id("n.txt"), from: FTPTest.source(Data("x".utf8), self), precondition: .mustNotExist)
        }
        let replaced = try await provider.upload(id("n.txt"), from: FTPTest.source(Data("newer\n".utf8), self),
                                                 precondition: .mustMatch(created.version!))
        XCTAssertNotEqual(replaced.version, created.version)
        await FTPTest.expectError(.versionChanged) {
            try await self.provider.upload(self.id("n.txt"), from: FTPTest.source(Data("stale\n".utf8), self), precondition: .mustMatch(created.version!))
        }
        XCTAssertEqual(DirectorySeeding.contents(folder, "n.txt"), Data("newer\n".utf8))
        let dir = try await provider.createFolder(id("d"))
        XCTAssertEqual(dir.kind, .folder)
        let moved = try await provider.move(replaced, to: id("d/m.txt"), replacing: false)
        let movedStat = try await provider.item(for: id("d/m.txt"))
        XCTAssertEqual(moved, movedStat)
        await FTPTest.expectError(.notEmpty) { try await self.provider.delete(dir) }
        try await provider.delete(moved)
        try await provider.delete(dir)
        XCTAssertEqual(FTPTest.names(in: folder), [])
    }

    func testSetModifiedIsNotSupportedWithoutMFMT() async throws {
        try DirectorySeeding.seed(folder, files: ["t": Data()], folders: [])
        await FTPTest.expectError(.notSupported) { try await self.provider.setModified(self.id("t"), to: 0) }
    }

    func testAnonymousReadsButCannotWrite() async throws {
        try DirectorySeeding.seed(folder, files: ["pub.txt": Data("public\n".utf8)], folders: [])
        let anonymous = try FTPTest.provider(server.url(user: nil), secret: nil)
        let items = try await anonymous.enumerateAll(in: base)
        XCTAssertEqual(items.map(\.name), ["pub.txt"])
        let sink = FTPTest.Sink()
        _ = try await anonymous.readContents(of: items[0], range: 0..<100, into: sink.sink)
        XCTAssertEqual(String(decoding: sink.contents, as: UTF8.self), "public\n")
        await FTPTest.expectError(.denied) { try await anonymous.createFolder(self.id("nope")) }
        await FTPTest.expectError(.denied) {
            try await anonymous.upload(self.id("w.txt"), from: FTPTest.source(Data("w".utf8), self), precondition: .none)
        }
        XCTAssertEqual(FTPTest.names(in: folder), ["pub.txt"])
    }
}
