import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// The S3 provider's write side against moto (signatures enforced): conditional PUTs,
/// multipart, folder markers, deletes, copy+delete moves.
final class S3WritingTests: XCTestCase {
    private func text(_ f: S3Fixture, _ path: String) throws -> String? {
        try f.server.get(f.key(path)).map { String(decoding: $0, as: UTF8.self) }
    }

    func testUploadPreconditions() async throws {
        let f = try S3Fixture("put")
        try f.seed(["old.txt": "old content"])
        let p = try f.provider()

        // mustNotExist: new → created; existing → .exists, content untouched.
        let created = try await p.upload(ItemIdentifier("/new.txt"), from: f.source(Data("fresh".utf8)), precondition: .mustNotExist)
        XCTAssertEqual(created.size, 5)
        XCTAssertNotNil(created.version)
        XCTAssertEqual(try text(f, "new.txt"), "fresh")
        await s3AssertError(.exists) {
            try await p.upload(ItemIdentifier("/old.txt"), from: f.source(Data("clobber".utf8)), precondition: .mustNotExist)
        }
        XCTAssertEqual(try text(f, "old.txt"), "old content")

        // mustMatch(current) → replaced, new version, equal to the listing's and HEAD's.
        let old = try await p.item(for: ItemIdentifier("/old.txt"))
        let replaced = try await p.upload(ItemIdentifier("/old.txt"), from: f.source(Data("new content!".utf8)),
                                          precondition: .mustMatch(old.version!))
        XCTAssertNotEqual(replaced.version, old.version)
        XCTAssertEqual(replaced.size, 12)
        XCTAssertEqual(try text(f, "old.txt"), "new content!")
        let listed = try await p.enumerateAll(in: .rootContainer).first { $0.name == "old.txt" }
        XCTAssertEqual(listed?.version, replaced.version)
        let headed = try await p.item(for: ItemIdentifier("/old.txt"))
        XCTAssertEqual(headed.version, replaced.version)
        XCTAssertEqual(headed.modified, replaced.modified)

        // mustMatch(stale) → .versionChanged, no overwrite.
        await s3AssertError(.versionChanged) {
            try await p.upload(ItemIdentifier("/old.txt"), from: f.source(Data("stale write".utf8)), precondition: .mustMatch(old.version!))
        }
        XCTAssertEqual(try text(f, "old.txt"), "new content!")
        // mustMatch on a file that is gone → .versionChanged, nothing created.
        await s3AssertError(.versionChanged) {
            try await p.upload(ItemIdentifier("/gone.txt"), from: f.source(Data("x".utf8)), precondition: .mustMatch(old.version!))
        }
        XCTAssertFalse(try f.server.exists(f.key("gone.txt")))

        // .none replaces whatever is there; an empty file works.
        _ = try await p.upload(ItemIdentifier("/old.txt"), from: f.source(Data()), precondition: .none)
        XCTAssertEqual(try text(f, "old.txt"), "")
    }

    func testMultipartUpload() async throws {
        let f = try S3Fixture("multipart")
        let p = try f.provider(["multipart_threshold": "5M", "part_size": "5M"])
        var big = Data(count: 12 << 20)
        big.withUnsafeMutableBytes { raw in
            for i in 0..<(raw.count / 8) { raw.storeBytes(of: UInt64.random(in: 0...UInt64.max), toByteOffset: i * 8, as: UInt64.self) }
        }

        let uploaded = try await p.upload(ItemIdentifier("/big.bin"), from: f.source(big), precondition: .mustNotExist)
        XCTAssertEqual(uploaded.size, Int64(big.count))
        // A multipart ETag names its part count; the listing must agree with what upload returned.
        XCTAssertTrue(uploaded.version?.hasSuffix("-3\"") ?? false, uploaded.version ?? "nil")
        XCTAssertEqual(try f.server.etag(f.key("big.bin")), uploaded.version)
        let listed = try await p.enumerateAll(in: .rootContainer).first { $0.name == "big.bin" }
        XCTAssertEqual(listed?.version, uploaded.version)
        XCTAssertEqual(listed?.size, Int64(big.count))
        let served = try XCTUnwrap(f.server.get(f.key("big.bin")))
        XCTAssertEqual(sha256(served), sha256(big))

        // Preconditions hold for multipart too, and nothing is overwritten.
        await s3AssertError(.exists) {
            try await p.upload(ItemIdentifier("/big.bin"), from: f.source(big), precondition: .mustNotExist)
        }
        await s3AssertError(.versionChanged) {
            try await p.upload(ItemIdentifier("/big.bin"), from: f.source(big), precondition: .mustMatch("\"stale-3\""))
        }
        var changed = big
        changed[0] ^= 0xFF
        let replaced = try await p.upload(ItemIdentifier("/big.bin"), from: f.source(changed), precondition: .mustMatch(uploaded.version!))
        XCTAssertNotEqual(replaced.version, uploaded.version)
        XCTAssertEqual(try f.server.get(f.key("big.bin")).map(sha256), sha256(changed))

        // Ranged reads of a multipart object, pinned to its ETag.
        let (sink, contents) = try f.sink()
        let got = try await p.readContents(of: replaced, range: (5 << 20) - 10..<(5 << 20) + 10, into: sink)
        XCTAssertEqual(got, (5 << 20) - 10..<(5 << 20) + 10)
        XCTAssertEqual(contents().suffix(20), changed[((5 << 20) - 10)..<((5 << 20) + 10)])
    }

    func testCreateFolder() async throws {
        let f = try S3Fixture("mkdir")
        try f.seed(["file.txt": "x"])
        let p = try f.provider()
        let made = try await p.createFolder(ItemIdentifier("/new"))
        XCTAssertEqual(made.kind, .folder)
        XCTAssertTrue(try f.server.exists(f.key("new/"), orPrefix: false), "a zero-byte marker is there")
        let listed = try await p.enumerateAll(in: .rootContainer)
        XCTAssertTrue(listed.contains { $0.name == "new" && $0.isFolder })
        let inside = try await p.enumerateAll(in: ItemIdentifier("/new"))
        XCTAssertEqual(inside.count, 0)
        _ = try await p.createFolder(ItemIdentifier("/new/inner"))
        await s3AssertError(.exists) { try await p.createFolder(ItemIdentifier("/new")) }
        await s3AssertError(.exists) { try await p.createFolder(ItemIdentifier("/file.txt")) }
        await s3AssertError(.notFound) { try await p.createFolder(ItemIdentifier("/missing/child")) }
    }

    func testDelete() async throws {
        let f = try S3Fixture("delete")
        try f.seed(["a.txt": "a", "full/x.txt": "x"], folders: ["empty", "full"])
        let p = try f.provider()
        try await p.delete(try await p.item(for: ItemIdentifier("/a.txt")))
        XCTAssertFalse(try f.server.exists(f.key("a.txt")))
        await s3AssertError(.notFound) { try await p.delete(Item(identifier: ItemIdentifier("/a.txt"), kind: .file)) }
        try await p.delete(Item(identifier: ItemIdentifier("/empty"), kind: .folder))
        XCTAssertFalse(try f.server.exists(f.key("empty")))
        await s3AssertError(.notFound) { try await p.delete(Item(identifier: ItemIdentifier("/empty"), kind: .folder)) }
        await s3AssertError(.notEmpty) { try await p.delete(Item(identifier: ItemIdentifier("/full"), kind: .folder)) }
        XCTAssertTrue(try f.server.exists(f.key("full/"), orPrefix: false))
    }

    func testMoveFile() async throws {
        let f = try S3Fixture("mvfile")
        try f.seed(["a.txt": "alpha", "b.txt": "beta", "c.txt": "gamma"], folders: ["dir"])
        let p = try f.provider()
        let a = try await p.item(for: ItemIdentifier("/a.txt"))
        let moved = try await p.move(a, to: ItemIdentifier("/dir/a b+c.txt"), replacing: false)
        XCTAssertEqual(moved.identifier.rawValue, "/dir/a b+c.txt")
        XCTAssertEqual(moved.size, 5)
        XCTAssertEqual(try text(f, "dir/a b+c.txt"), "alpha")
        XCTAssertFalse(try f.server.exists(f.key("a.txt")))
        let listed = try await p.enumerateAll(in: ItemIdentifier("/dir")).first { $0.name == "a b+c.txt" }
        XCTAssertEqual(listed?.version, moved.version)

        // replacing: false onto an existing file → .exists, both untouched.
        let b = try await p.item(for: ItemIdentifier("/b.txt"))
        await s3AssertError(.exists) { try await p.move(b, to: ItemIdentifier("/c.txt"), replacing: false) }
        XCTAssertEqual(try text(f, "b.txt"), "beta")
        XCTAssertEqual(try text(f, "c.txt"), "gamma")
        // replacing: true replaces it.
        _ = try await p.move(b, to: ItemIdentifier("/c.txt"), replacing: true)
        XCTAssertEqual(try text(f, "c.txt"), "beta")
        XCTAssertFalse(try f.server.exists(f.key("b.txt")))
        await s3AssertError(.notFound) { try await p.move(b, to: ItemIdentifier("/d.txt"), replacing: false) }
    }

    func testMoveFolderCopiesEveryKey() async throws {
        let f = try S3Fixture("mvdir")
        try f.seed(["src/a.txt": "a", "src/sub/b.txt": "b", "src/sub/deep/c.txt": "c", "other/x.txt": "x"],
                   folders: ["src", "src/sub", "src/empty"])
        let p = try f.provider()
        let src = try await p.item(for: ItemIdentifier("/src"))
        await s3AssertError(.exists) { try await p.move(src, to: ItemIdentifier("/other"), replacing: false) }
        await s3AssertError(.invalidName) { try await p.move(src, to: ItemIdentifier("/src/sub/in"), replacing: false) }
        let moved = try await p.move(src, to: ItemIdentifier("/dst ü"), replacing: false)
        XCTAssertEqual(moved.kind, .folder)
        XCTAssertEqual(try f.server.keys(prefix: f.key("src/")), [])
        XCTAssertEqual(Set(try f.server.keys(prefix: f.key("dst ü/")).map { String($0.dropFirst(f.prefix.count)) }),
                       ["dst ü/", "dst ü/a.txt", "dst ü/sub/", "dst ü/sub/b.txt", "dst ü/sub/deep/c.txt", "dst ü/empty/"])
        XCTAssertEqual(try text(f, "dst ü/sub/deep/c.txt"), "c")
        let listed = try await p.enumerateAll(in: ItemIdentifier("/dst ü")).map(\.name).sorted()
        XCTAssertEqual(listed, ["a.txt", "empty", "sub"])
        await s3AssertError(.notFound) { try await p.enumerateItems(in: ItemIdentifier("/src"), page: nil) }
    }

    func testSymlinksAndModifiedTimesAreNotSupported() async throws {
        let f = try S3Fixture("nosymlink")
        let p = try f.provider()
        await s3AssertError(.notSupported) { try await p.createSymlink(ItemIdentifier("/l"), target: "x") }
        await s3AssertError(.notSupported) { try await p.setModified(ItemIdentifier("/l"), to: 0) }
        XCTAssertEqual(p.capabilities, [.write, .rename, .delete, .createFolder, .rangedReads, .versions, .serverSideCopy])
    }
}

/// SHA-256 through sha256sum (no crypto package in the test target).
func sha256(_ data: Data) -> String {
    let path = NSTemporaryDirectory() + "favfs-sha-\(UUID().uuidString)"
    try? data.write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    let r = try? Shell.run("/usr/bin/sha256sum", [path])
    return String(r?.output.prefix(64) ?? "")
}
