import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// The WebDAV provider's write side (PUT, MKCOL, DELETE, MOVE) against a real Apache mod_dav.
final class WebDAVWritingTests: XCTestCase {
    static let awkwardNames = ["a b", "ünï ☃", "#h", "100%", "q?", "a+b", "it's", "a&b"]

    private var server: ApacheServer!
    private var provider: WebDAVProvider!
    private var tempPaths: [String] = []

    override func setUpWithError() throws {
        server = try ServerRequirement.apache()
        let root = server.documentRoot
        try Data("old content\n".utf8).write(to: root.appendingPathComponent("old.txt"))
        try FileManager.default.createDirectory(at: root.appendingPathComponent("dir"), withIntermediateDirectories: true)
        try Data("inside\n".utf8).write(to: root.appendingPathComponent("dir/inner.txt"))
        try FileManager.default.createDirectory(at: root.appendingPathComponent("empty"), withIntermediateDirectories: true)
        // Old files have strong ETags (Apache weakens those of files changed within the second).
        try WebDAVProviderTests.makeOld(root)
        try server.start()
        provider = Self.makeProvider(server)
    }

    override func tearDown() {
        provider = nil
        server?.remove()
        server = nil
        for path in tempPaths { unlink(path) }
    }

    static func makeProvider(_ server: ApacheServer, credentials: CurlCredentials? = nil) -> WebDAVProvider {
        WebDAVProvider(configuration: .init(baseURL: server.baseURL, remoteDescription: server.davURL, credentials: credentials),
                       transport: CurlTransport())
    }

    // MARK: helpers

    /// A content source holding `data` (a temp file, like the content cache).
    private func source(_ data: Data) throws -> ContentSource {
        let path = NSTemporaryDirectory() + "favfs-davwrite-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        tempPaths.append(path)
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ShellError("open \(path) failed") }
        addTeardownBlock { close(fd) }
        return ContentSource(fd: fd, length: Int64(data.count))
    }

    private func upload(_ path: String, _ text: String, _ precondition: UploadPrecondition) async throws -> Item {
        try await provider.upload(ItemIdentifier(path), from: source(Data(text.utf8)), precondition: precondition)
    }

    private func served(_ path: String) -> String? {
        (try? Data(contentsOf: server.documentRoot.appendingPathComponent(String(path.dropFirst()))))
            .map { String(decoding: $0, as: UTF8.self) }
    }

    private func exists(_ path: String, folder: Bool? = nil) -> Bool {
        var isDir: ObjCBool = false
        let there = FileManager.default.fileExists(atPath: server.documentRoot.appendingPathComponent(String(path.dropFirst())).path,
                                                   isDirectory: &isDir)
        return there && (folder == nil || isDir.boolValue == folder!)
    }

    @discardableResult
    private func expectError(_ kind: ProviderError.Kind, status: Int? = nil, path: String? = nil, _ body: () async throws -> Void,
                             file: StaticString = #filePath, line: UInt = #line) async -> ProviderError? {
        do {
            try await body()
            XCTFail("expected \(kind)", file: file, line: line)
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
            XCTAssertEqual(error.remote, server.davURL, file: file, line: line)
            if let status { XCTAssertEqual(error.status, status, "\(error)", file: file, line: line) }
            if let path { XCTAssertEqual(error.path, path, file: file, line: line) }
            return error
        } catch {
            XCTFail("expected a ProviderError, got \(error)", file: file, line: line)
        }
        return nil
    }

    // MARK: capabilities

    func testCapabilitiesIncludeTheWriteSide() {
        let caps = provider.capabilities
        XCTAssertTrue(caps.isSuperset(of: [.write, .rename, .delete, .createFolder]))
        XCTAssertFalse(caps.contains(.symlinks))
    }

    /// Apache keeps a time favfs sets as a dead property: it comes back with the listing, with
    /// nanoseconds, while the file stays that version; new content brings the server's time back.
    func testSetModifiedIsKeptWhileTheContentStays() async throws {
        let id = ItemIdentifier("/old.txt")
        let when = Timestamp(seconds: 1_500_000_000, nanoseconds: 123_456_789)
        let set = try await provider.setModified(id, to: when)
        XCTAssertEqual(set.modifiedTime, when)
        let listed = try await provider.enumerateItems(in: .rootContainer, page: nil).items.first { $0.identifier == id }
        XCTAssertEqual(listed?.modifiedTime, when)
        XCTAssertEqual(listed?.version, set.version, "a PROPPATCH is not a new version")
        let folder = try await provider.setModified(ItemIdentifier("/dir"), to: when)
        XCTAssertEqual(folder.modifiedTime, when, "folders keep times too")
        // Another client rewrites the file: the kept time no longer applies.
        try Data("new content from elsewhere\n".utf8).write(to: server.documentRoot.appendingPathComponent("old.txt"))
        let after = try await provider.item(for: id)
        XCTAssertNotEqual(after.modifiedTime, when)
        XCTAssertGreaterThan(after.modifiedTime?.seconds ?? 0, when.seconds)
    }

    /// After an upload the time is bound to the version its answer gave: a PROPPATCH and the
    /// PROPFIND that reads it back, no PROPFIND before. Once Apache was seen to keep the
    /// version when it stores a time, its answer that it stored one is enough: a PROPPATCH
    /// alone. Another client's change in between then keeps the server's own time.
    func testSetModifiedAfterAnUploadAsksNoVersionFirst() async throws {
        let when = Timestamp(seconds: 1_500_000_000, nanoseconds: 5)
        func methods(after before: Int, count: Int) -> [String] {
            server.accessLogLines(until: { $0.count >= before + count }).dropFirst(before).map { String($0.split(separator: " ")[0]) }
        }
        let uploaded = try await upload("/timed.txt", "ours", .mustNotExist)
        var before = server.accessLogLines().count
        let set = try await provider.setModified(ItemIdentifier("/timed.txt"), to: when, current: uploaded)
        XCTAssertEqual(set.modifiedTime, when)
        XCTAssertEqual(set.version, uploaded.version)
        XCTAssertEqual(methods(after: before, count: 2), ["PROPPATCH", "PROPFIND"])

        let second = try await upload("/second.txt", "ours too", .mustNotExist)
        before = server.accessLogLines().count
        let secondSet = try await provider.setModified(ItemIdentifier("/second.txt"), to: when, current: second)
        XCTAssertEqual(secondSet.modifiedTime, when)
        XCTAssertEqual(secondSet.version, second.version)
        XCTAssertEqual(methods(after: before, count: 1), ["PROPPATCH"])
        let listed = try await provider.enumerateItems(in: .rootContainer, page: nil).items
        XCTAssertEqual(listed.first { $0.name == "timed.txt" }?.modifiedTime, when)
        XCTAssertEqual(listed.first { $0.name == "second.txt" }?.modifiedTime, when)
        XCTAssertEqual(listed.first { $0.name == "second.txt" }?.version, second.version)

        // Changed elsewhere after the answer the caller holds: the time was for our content.
        let stale = try await upload("/raced.txt", "ours", .mustNotExist)
        try Data("theirs, longer\n".utf8).write(to: server.documentRoot.appendingPathComponent("raced.txt"))
        _ = try await provider.setModified(ItemIdentifier("/raced.txt"), to: when, current: stale)
        let relisted = try await provider.item(for: ItemIdentifier("/raced.txt"))
        XCTAssertNotEqual(relisted.version, stale.version)
        XCTAssertNotEqual(relisted.modifiedTime, when, "our time stays with our content")
        XCTAssertEqual(relisted.size, 15)
    }

    func testSymlinksAreNotSupported() async throws {
        await expectError(.notSupported) { _ = try await self.provider.createSymlink(ItemIdentifier("/l"), target: "old.txt") }
    }

    // MARK: upload

    func testCreateThenCreateAgainIsExists() async throws {
        let item = try await upload("/new.txt", "fresh", .mustNotExist)
        XCTAssertEqual(item.identifier, ItemIdentifier("/new.txt"))
        XCTAssertEqual(item.kind, .file)
        XCTAssertEqual(item.size, 5)
        XCTAssertNotNil(item.version)
        XCTAssertNotNil(item.modified)
        XCTAssertEqual(served("/new.txt"), "fresh")
        // Read back with a HEAD: the same version, size and time a PROPFIND lists.
        let listed = try await provider.item(for: ItemIdentifier("/new.txt"))
        XCTAssertEqual(item.contentTag, listed.contentTag)
        XCTAssertEqual(item.size, listed.size)
        XCTAssertEqual(item.modified, listed.modified)
        let error = await expectError(.exists, status: 412, path: "/new.txt") { _ = try await self.upload("/new.txt", "again", .mustNotExist) }
        XCTAssertEqual(error?.detail, "PUT failed: 412 Precondition Failed")
        XCTAssertEqual(served("/new.txt"), "fresh")
    }

    func testReplaceWithTheStrongVersionWorks() async throws {
        let old = try await provider.item(for: ItemIdentifier("/old.txt"))
        let version = try XCTUnwrap(old.version)
        XCTAssertFalse(version.hasPrefix("W/"), "a backdated file should have a strong ETag: \(version)")
        let new = try await upload("/old.txt", "new content", .mustMatch(version))
        XCTAssertEqual(served("/old.txt"), "new content")
        XCTAssertEqual(new.size, 11)
        XCTAssertNotEqual(new.version, version)
    }

    func testReplaceWithAWrongVersionIsVersionChanged() async throws {
        // Compared under a WebDAV lock, before anything is sent.
        let error = await expectError(.versionChanged, status: 207, path: "/old.txt") {
            _ = try await self.upload("/old.txt", "clobber", .mustMatch("\"deadbeef-1-2\""))
        }
        XCTAssertEqual(error?.detail.hasPrefix("PUT not sent: the file changed on the server"), true, error?.detail ?? "")
        XCTAssertEqual(served("/old.txt"), "old content\n")
    }

    func testFileChangedRightAfterItWasReadIsVersionChanged() async throws {
        // Changed on the server less than a second before it was read: Apache hands out a weak ETag.
        let url = server.documentRoot.appendingPathComponent("old.txt")
        try Data("changed once\n".utf8).write(to: url)
        let read = try await provider.item(for: ItemIdentifier("/old.txt"))
        let weak = try XCTUnwrap(read.version)
        XCTAssertTrue(weak.hasPrefix("W/"), "expected a weak ETag for a file changed just now: \(weak)")
        // ... and changed again right after it was read.
        try Data("changed twice, longer\n".utf8).write(to: url)
        await expectError(.versionChanged, path: "/old.txt") { _ = try await self.upload("/old.txt", "mine", .mustMatch(weak)) }
        XCTAssertEqual(served("/old.txt"), "changed twice, longer\n")
    }

    func testUnchangedFileWithAWeakBaseVersionIsReplaced() async throws {
        let created = try await upload("/w.txt", "first", .mustNotExist)
        let weak = try XCTUnwrap(created.version)
        XCTAssertTrue(weak.hasPrefix("W/"), "a file written just now should have a weak ETag: \(weak)")
        let replaced = try await upload("/w.txt", "second", .mustMatch(weak))
        XCTAssertEqual(served("/w.txt"), "second")
        XCTAssertEqual(replaced.size, 6)
        // Also once the tag has become strong (more than a second later): same file, same tag.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-60)],
                                              ofItemAtPath: server.documentRoot.appendingPathComponent("w.txt").path)
        let strong = try await provider.item(for: ItemIdentifier("/w.txt"))
        _ = try await upload("/w.txt", "third", .mustMatch(try XCTUnwrap(strong.version)))
        XCTAssertEqual(served("/w.txt"), "third")
    }

    func testWeakBaseVersionOfADeletedFileIsVersionChanged() async throws {
        let created = try await upload("/gone.txt", "soon gone", .mustNotExist)
        let weak = try XCTUnwrap(created.version)
        try FileManager.default.removeItem(at: server.documentRoot.appendingPathComponent("gone.txt"))
        // LOCK with If-Match: * is refused for a missing file (and creates nothing).
        await expectError(.versionChanged, status: 412, path: "/gone.txt") { _ = try await self.upload("/gone.txt", "mine", .mustMatch(weak)) }
        XCTAssertFalse(exists("/gone.txt"))
    }

    func testAFileLockedByAnotherClientIsLockedAndUntouchedThenWritable() async throws {
        let old = try await provider.item(for: ItemIdentifier("/old.txt"))
        let url = server.baseURL + "old.txt"
        let lockinfo = #"<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>"#
        // Another client (curl) holds a write lock.
        let lock = try TimedProcess.run("/usr/bin/curl", ["-s", "-i", "-X", "LOCK", "-H", "Timeout: Second-60", "-H", "Content-Type: application/xml",
                                                          "--data", lockinfo, url], timeout: 30)
        let token = try XCTUnwrap(lock.stdout.split(whereSeparator: \.isNewline).first { $0.lowercased().hasPrefix("lock-token:") }?
            .dropFirst("lock-token:".count).trimmingCharacters(in: .whitespacesAndNewlines), lock.stdout)
        await expectError(.locked, status: 423, path: "/old.txt") {
            _ = try await self.upload("/old.txt", "mine", .mustMatch(try XCTUnwrap(old.version)))
        }
        XCTAssertEqual(served("/old.txt"), "old content\n")
        _ = try TimedProcess.run("/usr/bin/curl", ["-s", "-X", "UNLOCK", "-H", "Lock-Token: \(token)", url], timeout: 30)
        _ = try await upload("/old.txt", "mine", .mustMatch(try XCTUnwrap(old.version)))
        XCTAssertEqual(served("/old.txt"), "mine")
        // favfs released its own lock: a client without locks can write.
        let put = try TimedProcess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT", "--data", "theirs", url], timeout: 30)
        XCTAssertEqual(put.stdout, "204")
    }

    /// Apache's lock database (mod_dav_fs) mixes up the locks of clients that lock files at the
    /// same moment: a PUT carrying the lock just granted for it is refused (412), and the lost
    /// lock may then sit on another client's file until it times out (423). Several clients,
    /// each replacing its own files over and over: no refusal may read as a change (that would
    /// make a conflict copy of an edit nobody else touched), and each file holds its client's
    /// last upload. A client that finds its file locked goes on with a new one.
    func testLocksTheServerMixesUpAcrossClientsAreNeverAChange() async throws {
        let clients = 6, rounds = 40
        let root = server.documentRoot
        let makeProvider = { [server] in Self.makeProvider(server!) }
        let outcomes = try await withThrowingTaskGroup(of: [String: Int].self) { group in
            for c in 0..<clients {
                let client = makeProvider()
                group.addTask {
                    func upload(_ path: String, _ text: String, _ precondition: UploadPrecondition) async throws -> String {
                        let file = NSTemporaryDirectory() + "favfs-davlock-\(UUID().uuidString)"
                        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
                        let fd = open(file, O_RDONLY)
                        unlink(file)
                        guard fd >= 0 else { throw ShellError("open \(file) failed") }
                        defer { close(fd) }
                        let item = try await client.upload(ItemIdentifier(path), from: ContentSource(fd: fd, length: Int64(text.utf8.count)),
                                                           precondition: precondition)
                        return try XCTUnwrap(item.version)
                    }
                    func served(_ path: String) -> String? {
                        (try? Data(contentsOf: root.appendingPathComponent(String(path.dropFirst())))).map { String(decoding: $0, as: UTF8.self) }
                    }
                    var counts: [String: Int] = [:]
                    var file = 0
                    var path = "/lock-\(c)-0"
                    var version = try await upload(path, "0", .none)
                    var last = "0"
                    for round in 1...rounds {
                        let text = "client \(c) round \(round)"
                        do {
                            version = try await upload(path, text, .mustMatch(version))
                            last = text
                            counts["replaced", default: 0] += 1
                        } catch let e as ProviderError where e.kind == .locked {
                            counts["locked \(e.status.map(String.init) ?? "-")", default: 0] += 1
                            XCTAssertEqual(served(path), last, "a refused upload changed \(path)")
                            file += 1
                            path = "/lock-\(c)-\(file)"
                            version = try await upload(path, "0", .none)
                            last = "0"
                        }
                    }
                    XCTAssertEqual(served(path), last)
                    return counts
                }
            }
            var all: [String: Int] = [:]
            for try await counts in group { all.merge(counts, uniquingKeysWith: +) }
            return all
        }
        print("uploads by \(clients) clients at once: \(outcomes)")
        XCTAssertGreaterThan(outcomes["replaced", default: 0], clients * rounds / 2, "\(outcomes)")
    }

    func testPlainUploadReplacesWhateverIsThere() async throws {
        _ = try await upload("/old.txt", "whatever", .none)
        XCTAssertEqual(served("/old.txt"), "whatever")
    }

    func testUploadIntoAMissingFolderIsNotFound() async throws {
        let error = await expectError(.notFound, status: 409, path: "/nowhere/x.txt") { _ = try await self.upload("/nowhere/x.txt", "x", .mustNotExist) }
        XCTAssertEqual(error?.detail, "PUT failed: 409 Conflict")
    }

    func testUploadWithAwkwardNames() async throws {
        for name in Self.awkwardNames {
            let item = try await upload("/dir/" + name, "bytes of \(name)", .mustNotExist)
            XCTAssertEqual(item.identifier.name, name)
            XCTAssertEqual(served("/dir/" + name), "bytes of \(name)", name)
        }
    }

    func testLargeUploadIsStreamed() async throws {
        let path = NSTemporaryDirectory() + "favfs-davwrite-big-\(UUID().uuidString)"
        tempPaths.append(path)
        try Shell.sh("dd if=/dev/urandom of='\(path)' bs=1M count=48 status=none")
        let fd = open(path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        // Reset the peak RSS, then read it after the upload: 48 MiB in memory would show.
        let resettable = (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil
        let before = Self.peakRSSKiB()
        let item = try await provider.upload(ItemIdentifier("/big.bin"), from: ContentSource(fd: fd, length: 48 << 20), precondition: .mustNotExist)
        let after = Self.peakRSSKiB()
        XCTAssertEqual(item.size, 48 << 20)
        let local = try Shell.run("/usr/bin/sha256sum", [path]).output.prefix(64)
        let remote = try Shell.run("/usr/bin/sha256sum", [server.documentRoot.appendingPathComponent("big.bin").path]).output.prefix(64)
        XCTAssertEqual(local.count, 64)
        XCTAssertEqual(local, remote)
        print("48 MiB upload: peak RSS \(before ?? -1) KiB before, \(after ?? -1) KiB after (reset: \(resettable))")
        if resettable, let before, let after {
            XCTAssertLessThan(after - before, 24 << 10, "peak RSS grew from \(before) KiB to \(after) KiB")
        }
    }

    /// VmHWM of this process in KiB.
    static func peakRSSKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ")[1])
    }

    func testUploadToAStoppedServerIsUnreachableQuickly() async throws {
        server.stop()
        let start = Date()
        await expectError(.unreachable, path: "/x.txt") { _ = try await self.upload("/x.txt", "x", .none) }
        await expectError(.unreachable, path: "/x.txt") { _ = try await self.upload("/x.txt", "x", .mustNotExist) }
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
    }

    func testUnreadableSourceIsLocalIO() async throws {
        let path = NSTemporaryDirectory() + "favfs-davwrite-wo-\(UUID().uuidString)"
        tempPaths.append(path)
        try Data("abc".utf8).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_WRONLY)
        defer { close(fd) }
        await expectError(.localIO, path: "/wo.txt") {
            _ = try await self.provider.upload(ItemIdentifier("/wo.txt"), from: ContentSource(fd: fd, length: 3), precondition: .none)
        }
    }

    // MARK: folders

    func testCreateFolder() async throws {
        let item = try await provider.createFolder(ItemIdentifier("/made"))
        XCTAssertEqual(item.kind, .folder)
        XCTAssertEqual(item.identifier, ItemIdentifier("/made"))
        XCTAssertTrue(exists("/made", folder: true))
        let error = await expectError(.exists, status: 405, path: "/made") { _ = try await self.provider.createFolder(ItemIdentifier("/made")) }
        XCTAssertEqual(error?.detail, "MKCOL failed: 405 Method Not Allowed")
        // Apache answers 400 here (RFC 4918 would say 405): the provider looks and finds the file.
        await expectError(.exists, path: "/old.txt") { _ = try await self.provider.createFolder(ItemIdentifier("/old.txt")) }
        await expectError(.notAFolder, path: "/old.txt/sub") { _ = try await self.provider.createFolder(ItemIdentifier("/old.txt/sub")) }
        await expectError(.notFound, status: 409, path: "/no/such") { _ = try await self.provider.createFolder(ItemIdentifier("/no/such")) }
        for name in Self.awkwardNames {
            let f = try await provider.createFolder(ItemIdentifier("/made/" + name))
            XCTAssertEqual(f.identifier.name, name)
            XCTAssertTrue(exists("/made/" + name, folder: true), name)
        }
        let listed = try await provider.enumerateAll(in: ItemIdentifier("/made"))
        XCTAssertEqual(Set(listed.map(\.name)), Set(Self.awkwardNames))
    }

    // MARK: delete

    func testDeleteFileAndEmptyFolder() async throws {
        let file = try await provider.item(for: ItemIdentifier("/old.txt"))
        try await provider.delete(file)
        XCTAssertFalse(exists("/old.txt"))
        let folder = try await provider.item(for: ItemIdentifier("/empty"))
        XCTAssertEqual(folder.kind, .folder)
        try await provider.delete(folder)
        XCTAssertFalse(exists("/empty"))
        let error = await expectError(.notFound, status: 404, path: "/old.txt") { try await self.provider.delete(file) }
        XCTAssertEqual(error?.detail, "DELETE failed: 404 Not Found")
    }

    func testDeleteAwkwardNames() async throws {
        for name in Self.awkwardNames {
            let item = try await upload("/" + name, "x", .mustNotExist)
            try await provider.delete(item)
            XCTAssertFalse(exists("/" + name), name)
        }
    }

    // MARK: move

    func testMoveFile() async throws {
        let file = try await provider.item(for: ItemIdentifier("/old.txt"))
        let moved = try await provider.move(file, to: ItemIdentifier("/dir/renamed.txt"), replacing: false)
        XCTAssertEqual(moved.identifier, ItemIdentifier("/dir/renamed.txt"))
        XCTAssertEqual(moved.kind, .file)
        XCTAssertEqual(moved.size, 12)
        XCTAssertFalse(exists("/old.txt"))
        XCTAssertEqual(served("/dir/renamed.txt"), "old content\n")
    }

    func testMoveFolder() async throws {
        let folder = try await provider.item(for: ItemIdentifier("/dir"))
        let moved = try await provider.move(folder, to: ItemIdentifier("/empty/dir2"), replacing: false)
        XCTAssertEqual(moved.kind, .folder)
        XCTAssertEqual(moved.identifier, ItemIdentifier("/empty/dir2"))
        XCTAssertFalse(exists("/dir"))
        XCTAssertEqual(served("/empty/dir2/inner.txt"), "inside\n")
    }

    func testMoveOverAnExistingFile() async throws {
        _ = try await upload("/target.txt", "target", .mustNotExist)
        let file = try await provider.item(for: ItemIdentifier("/old.txt"))
        let error = await expectError(.exists, status: 412, path: "/old.txt") {
            _ = try await self.provider.move(file, to: ItemIdentifier("/target.txt"), replacing: false)
        }
        XCTAssertEqual(error?.detail, "MOVE failed: 412 Precondition Failed")
        XCTAssertEqual(served("/target.txt"), "target")
        XCTAssertEqual(served("/old.txt"), "old content\n")
        let moved = try await provider.move(file, to: ItemIdentifier("/target.txt"), replacing: true)
        XCTAssertEqual(moved.size, 12)
        XCTAssertEqual(served("/target.txt"), "old content\n")
        XCTAssertFalse(exists("/old.txt"))
    }

    func testMoveIntoAMissingFolderIsNotFound() async throws {
        let file = try await provider.item(for: ItemIdentifier("/old.txt"))
        // Apache mod_dav_fs answers 500 here (RFC 4918 says 409): the provider looks and finds
        // the destination's folder missing.
        let error = await expectError(.notFound, path: "/old.txt") {
            _ = try await self.provider.move(file, to: ItemIdentifier("/nowhere/x.txt"), replacing: false)
        }
        XCTAssertTrue(error?.detail.contains("the folder /nowhere does not exist") == true, error?.detail ?? "")
        XCTAssertEqual(served("/old.txt"), "old content\n")
        let ghost = Item(identifier: ItemIdentifier("/ghost.txt"), kind: .file)
        await expectError(.notFound, status: 404, path: "/ghost.txt") {
            _ = try await self.provider.move(ghost, to: ItemIdentifier("/x.txt"), replacing: false)
        }
    }

    func testMoveWithAwkwardNames() async throws {
        for (i, name) in Self.awkwardNames.enumerated() {
            let destinationName = Self.awkwardNames[(i + 1) % Self.awkwardNames.count] + " moved"
            let file = try await upload("/" + name, "file \(name)", .mustNotExist)
            let moved = try await provider.move(file, to: ItemIdentifier("/dir/" + destinationName), replacing: false)
            XCTAssertEqual(moved.identifier.name, destinationName)
            XCTAssertEqual(served("/dir/" + destinationName), "file \(name)", name)
            XCTAssertFalse(exists("/" + name), name)

            let folder = try await provider.createFolder(ItemIdentifier("/f " + name))
            let movedFolder = try await provider.move(folder, to: ItemIdentifier("/empty/" + destinationName), replacing: false)
            XCTAssertEqual(movedFolder.kind, .folder)
            XCTAssertTrue(exists("/empty/" + destinationName, folder: true), name)
            XCTAssertFalse(exists("/f " + name), name)
        }
        let listed = try await provider.enumerateAll(in: ItemIdentifier("/dir"))
        XCTAssertEqual(Set(listed.map(\.name)), Set(Self.awkwardNames.map { $0 + " moved" } + ["inner.txt"]))
    }
}

/// Uploads through Basic and Digest login.
final class WebDAVWritingAuthTests: XCTestCase {
    private func check(_ auth: ApacheServer.Auth, _ scheme: CurlCredentials.Scheme) async throws {
        let server = try ServerRequirement.apache(auth: auth)
        defer { server.remove() }
        try server.start()
        let path = NSTemporaryDirectory() + "favfs-davwrite-auth-\(UUID().uuidString)"
        let data = Data(repeating: 0x61, count: 200_000)
        try data.write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        let good = WebDAVWritingTests.makeProvider(server, credentials: CurlCredentials(user: "alice", password: "pw1", scheme: scheme))
        let item = try await good.upload(ItemIdentifier("/up.bin"), from: ContentSource(fd: fd, length: Int64(data.count)), precondition: .mustNotExist)
        XCTAssertEqual(item.size, Int64(data.count))
        XCTAssertEqual(try Data(contentsOf: server.documentRoot.appendingPathComponent("up.bin")), data)
        _ = try await good.createFolder(ItemIdentifier("/d"))
        let bad = WebDAVWritingTests.makeProvider(server, credentials: CurlCredentials(user: "alice", password: "nope", scheme: scheme))
        do {
            _ = try await bad.upload(ItemIdentifier("/up2.bin"), from: ContentSource(fd: fd, length: Int64(data.count)), precondition: .none)
            XCTFail("expected denied")
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, .denied)
            XCTAssertEqual(error.status, 401)
            XCTAssertEqual(error.detail, "PUT failed: 401 Unauthorized")
        }
    }

    func testBasic() async throws { try await check(.basic(user: "alice", password: "pw1"), .basic) }
    func testDigestWithAnyScheme() async throws { try await check(.digest(user: "alice", password: "pw1"), .any) }
}
