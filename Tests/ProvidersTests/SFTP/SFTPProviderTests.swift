import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// The SFTP provider's read side against a real OpenSSH sshd: listings, stats, ranged and
/// pinned reads, awkward names, host keys, logins and a server that is down.
final class SFTPProviderTests: XCTestCase {
    static let awkwardNames = ["a b", "ünïcödé ☃", "#hash", "100%", "what?", "a+b", "it's", "a&b", "semi;colon", "co:lon",
                               "tab\there", "trailing dots...", "quote \"q\"", "back\\slash", "x -> y", " lead", "trail "]

    private var server: SSHServer!

    override func setUpWithError() throws {
        server = try SFTPTestServer.shared()
    }

    func testListsFilesFoldersSymlinksWithExactSizesAndTimes() async throws {
        let (area, dir) = try SFTPTestServer.area(server, "list")
        try Data("hello\n".utf8).write(to: dir.appendingPathComponent("a.txt"))
        try Data().write(to: dir.appendingPathComponent("empty"))
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub dir"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("link").path, withDestinationPath: "a.txt")
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("odd -> link").path, withDestinationPath: "to -> x")
        let when = Date(timeIntervalSince1970: 1_600_000_123)
        try FileManager.default.setAttributes([.modificationDate: when], ofItemAtPath: dir.appendingPathComponent("a.txt").path)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: dir.appendingPathComponent("a.txt").path)

        let p = try SFTPTestServer.provider(server)
        let items = try await p.enumerateAll(in: ItemIdentifier("/\(area)"))
        let byName = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0) })
        XCTAssertEqual(Set(byName.keys), ["a.txt", "empty", "sub dir", "link", "odd -> link"])
        let a = try XCTUnwrap(byName["a.txt"])
        XCTAssertEqual(a.kind, .file)
        XCTAssertEqual(a.size, 6)
        XCTAssertEqual(a.modified, 1_600_000_123, "an old file's mtime is exact, not the listing's date-only")
        XCTAssertEqual(a.version, "s6-t1600000123")
        XCTAssertEqual(a.permissions, 0o600)
        XCTAssertEqual(byName["empty"]?.size, 0)
        XCTAssertEqual(byName["sub dir"]?.kind, .folder)
        XCTAssertNil(byName["sub dir"]?.version)
        XCTAssertEqual(byName["link"]?.kind, .symlink)
        XCTAssertEqual(byName["link"]?.symlinkTarget, "a.txt")
        XCTAssertEqual(byName["odd -> link"]?.kind, .symlink)
        XCTAssertEqual(byName["odd -> link"]?.symlinkTarget, "to -> x")

        // item(for:) agrees with the listing, for every kind.
        for item in items {
            let stat = try await p.item(for: item.identifier)
            XCTAssertEqual(stat.kind, item.kind, item.name)
            XCTAssertEqual(stat.version, item.version, item.name)
            XCTAssertEqual(stat.size, item.size, item.name)
            XCTAssertEqual(stat.symlinkTarget, item.symlinkTarget, item.name)
        }
        let root = try await p.item(for: .rootContainer)
        XCTAssertEqual(root.kind, .folder)
    }

    func testListsAThousandFiles() async throws {
        let (area, dir) = try SFTPTestServer.area(server, "many")
        for i in 0..<1050 { try Data("\(i)".utf8).write(to: dir.appendingPathComponent(String(format: "file %04d.txt", i))) }
        let p = try SFTPTestServer.provider(server)
        let start = Date()
        let items = try await p.enumerateAll(in: ItemIdentifier("/\(area)"))
        let took = Date().timeIntervalSince(start)
        XCTAssertEqual(items.count, 1050)
        XCTAssertEqual(Set(items.map(\.name)).count, 1050)
        XCTAssertTrue(items.allSatisfy { $0.kind == .file && $0.version != nil })
        XCTAssertEqual(items.first { $0.name == "file 0999.txt" }?.size, 3)
        print("SFTP: listing 1050 files with a stat each took \(String(format: "%.2f", took)) s")
    }

    func testRelistingReusesStatsButSeesChanges() async throws {
        let (area, dir) = try SFTPTestServer.area(server, "relist")
        for name in ["same", "grows", "touched", "gone"] {
            try Data("12345".utf8).write(to: dir.appendingPathComponent(name))
            try SFTPTestServer.age(dir.appendingPathComponent(name))
        }
        let p = try SFTPTestServer.provider(server)
        let folder = ItemIdentifier("/\(area)")
        let first = Dictionary(uniqueKeysWithValues: try await p.enumerateAll(in: folder).map { ($0.name, $0) })
        try Data("123456".utf8).write(to: dir.appendingPathComponent("grows"))
        try SFTPTestServer.age(dir.appendingPathComponent("touched"), by: 60)
        try FileManager.default.removeItem(at: dir.appendingPathComponent("gone"))
        try Data("new".utf8).write(to: dir.appendingPathComponent("new"))
        let second = Dictionary(uniqueKeysWithValues: try await p.enumerateAll(in: folder).map { ($0.name, $0) })
        XCTAssertEqual(Set(second.keys), ["same", "grows", "touched", "new"])
        XCTAssertEqual(second["same"]?.version, first["same"]?.version)
        XCTAssertEqual(second["grows"]?.size, 6)
        XCTAssertNotEqual(second["grows"]?.version, first["grows"]?.version)
        XCTAssertNotEqual(second["touched"]?.version, first["touched"]?.version)
        for (name, item) in second {
            let stat = try await p.item(for: item.identifier)
            XCTAssertEqual(stat.version, item.version, name)
        }
    }

    func testAwkwardNamesAsFilesAndFolders() async throws {
        let (area, dir) = try SFTPTestServer.area(server, "names")
        for name in Self.awkwardNames {
            try Data("file \(name)".utf8).write(to: dir.appendingPathComponent(name))
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("dir \(name)"), withIntermediateDirectories: true)
            try Data("inner".utf8).write(to: dir.appendingPathComponent("dir \(name)/inner \(name)"))
        }
        let p = try SFTPTestServer.provider(server)
        let items = try await p.enumerateAll(in: ItemIdentifier("/\(area)"))
        XCTAssertEqual(Set(items.map(\.name)), Set(Self.awkwardNames + Self.awkwardNames.map { "dir \($0)" }))
        for name in Self.awkwardNames {
            let file = try await p.item(for: ItemIdentifier("/\(area)/\(name)"))
            XCTAssertEqual(file.kind, .file, name)
            let (_, bytes) = try await SFTPTestServer.read(p, file, 0..<100)
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "file \(name)")
            let inner = try await p.enumerateAll(in: ItemIdentifier("/\(area)/dir \(name)"))
            XCTAssertEqual(inner.map(\.name), ["inner \(name)"])
            XCTAssertEqual(inner.first?.size, 5)
        }
    }

    func testRangedReadsLandAtTheirOffsets() async throws {
        let (area, dir) = try SFTPTestServer.area(server, "read")
        let data = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 256) })
        try data.write(to: dir.appendingPathComponent("big.bin"))
        try Data().write(to: dir.appendingPathComponent("empty"))
        let p = try SFTPTestServer.provider(server)
        let item = try await p.item(for: ItemIdentifier("/\(area)/big.bin"))
        for range: Range<Int64> in [0..<1000, 123_456..<200_000, 299_000..<300_000, 299_990..<310_000, 0..<300_000] {
            let (written, bytes) = try await SFTPTestServer.read(p, item, range)
            let end = min(range.upperBound, 300_000)
            XCTAssertEqual(written, range.lowerBound..<end)
            XCTAssertEqual(bytes, data[Int(range.lowerBound)..<Int(end)], "\(range)")
        }
        let (past, _) = try await SFTPTestServer.read(p, item, 300_000..<300_100)
        XCTAssertTrue(past.isEmpty)
        let (farPast, _) = try await SFTPTestServer.read(p, item, 400_000..<400_100)
        XCTAssertTrue(farPast.isEmpty)
        let empty = try await p.item(for: ItemIdentifier("/\(area)/empty"))
        let (none, _) = try await SFTPTestServer.read(p, empty, 0..<10)
        XCTAssertTrue(none.isEmpty)
    }

    func testPinnedReadsNoticeAChange() async throws {
        let (area, dir) = try SFTPTestServer.area(server, "pinned")
        let url = dir.appendingPathComponent("f")
        try Data("version one".utf8).write(to: url)
        try SFTPTestServer.age(url)
        let p = try SFTPTestServer.provider(server)
        let item = try await p.item(for: ItemIdentifier("/\(area)/f"))
        _ = try await SFTPTestServer.read(p, item, 0..<4)
        // Same size, new mtime.
        try Data("version two".utf8).write(to: url)
        await SFTPTestServer.expectError(.versionChanged) { _ = try await SFTPTestServer.read(p, item, 0..<4) }
        // Same mtime, shorter: the byte count gives it away.
        try Data("v3".utf8).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: item.modified!)], ofItemAtPath: url.path)
        await SFTPTestServer.expectError(.versionChanged) { _ = try await SFTPTestServer.read(p, item, 0..<11) }
        await SFTPTestServer.expectError(.versionChanged) { _ = try await SFTPTestServer.read(p, item, 5..<11) }
    }

    func testMissingItemsAreNotFound() async throws {
        let p = try SFTPTestServer.provider(server)
        await SFTPTestServer.expectError(.notFound) { _ = try await p.item(for: ItemIdentifier("/no-such-\(UUID())")) }
        await SFTPTestServer.expectError(.notFound) { _ = try await p.enumerateItems(in: ItemIdentifier("/no-such-folder"), page: nil) }
        let gone = Item(identifier: ItemIdentifier("/nothing"), kind: .file, size: 10)
        await SFTPTestServer.expectError(.notFound) { _ = try await SFTPTestServer.read(p, gone, 0..<10) }
    }

    func testQuota() async throws {
        let p = try SFTPTestServer.provider(server)
        let quota = try await p.quota()
        XCTAssertNotNil(quota?.availableBytes)
        XCTAssertGreaterThan(quota?.usedBytes ?? 0, 0)
    }

    // MARK: host keys, logins, reachability

    func testUnknownHostKeyIsRefusedWithAClearMessage() async throws {
        let p = try SFTPTestServer.provider(server, options: ["known_hosts": server.emptyKnownHosts])
        let error = await SFTPTestServer.expectError(.denied) { _ = try await p.enumerateItems(in: .rootContainer, page: nil) }
        XCTAssertTrue(error?.detail.contains("host key for 127.0.0.1:\(server.port) is not in \(server.emptyKnownHosts)") == true, error?.detail ?? "")
        XCTAssertTrue(error?.detail.contains("ssh-keyscan -p \(server.port) 127.0.0.1") == true, error?.detail ?? "")
        XCTAssertEqual(error?.remote.hasPrefix("sftp://"), true)
        // The key offered, named as OpenSSH names it, so it can be checked before it is accepted.
        let fingerprint = try Self.fingerprint(server.root.path + "/host_ed25519.pub")
        XCTAssertTrue(error?.detail.contains("the server offers ssh-ed25519 \(fingerprint)") == true, "\(fingerprint): \(error?.detail ?? "")")

        let missing = try SFTPTestServer.provider(server, options: ["known_hosts": server.root.path + "/none"])
        let e2 = await SFTPTestServer.expectError(.denied) { _ = try await missing.item(for: .rootContainer) }
        XCTAssertTrue(e2?.detail.contains("the file does not exist") == true, e2?.detail ?? "")
    }

    func testChangedHostKeyIsRefusedLoudly() async throws {
        let p = try SFTPTestServer.provider(server, options: ["known_hosts": server.changedKnownHosts])
        let error = await SFTPTestServer.expectError(.denied) { _ = try await p.item(for: .rootContainer) }
        XCTAssertTrue(error?.detail.contains("host key for 127.0.0.1:\(server.port) has CHANGED") == true, error?.detail ?? "")
        XCTAssertTrue(error?.detail.contains("ssh-keygen -R '[127.0.0.1]:\(server.port)'") == true, error?.detail ?? "")
        XCTAssertTrue(error?.detail.contains(try Self.fingerprint(server.root.path + "/host_ed25519.pub")) == true, error?.detail ?? "")
    }

    /// "SHA256:…" of a public key file, from OpenSSH's own ssh-keygen.
    static func fingerprint(_ pub: String) throws -> String {
        let r = try Shell.run("/usr/bin/ssh-keygen", ["-l", "-E", "sha256", "-f", pub])
        return String(r.output.split(separator: " ").dropFirst().first ?? "")
    }

    func testWrongKeyOrUserIsDenied() async throws {
        let wrongKey = try SFTPTestServer.provider(server, options: ["key": server.wrongKey])
        let e1 = await SFTPTestServer.expectError(.denied) { _ = try await wrongKey.item(for: .rootContainer) }
        XCTAssertTrue(e1?.detail.contains("refused the login") == true, e1?.detail ?? "")
        XCTAssertEqual(e1?.status, 67)

        let url = try RemoteURL("sftp://nobody-here@127.0.0.1:\(server.port)\(server.files.path)")
        let wrongUser = try XCTUnwrap(try ProviderFactory.make(RemoteConfiguration(
            url: url, options: ["key": server.clientKey, "known_hosts": server.knownHosts])) as? SFTPProvider)
        await SFTPTestServer.expectError(.denied) { _ = try await wrongUser.item(for: .rootContainer) }

        let password = try SFTPTestServer.provider(server, options: ["key": server.wrongKey], secret: "not the password")
        await SFTPTestServer.expectError(.denied) { _ = try await password.item(for: .rootContainer) }

        // libssh2 1.10 cannot sign with RSA the way OpenSSH 8.8+ accepts: the message says so.
        let rsa = server.root.path + "/rsa_key"
        XCTAssertEqual(try Shell.run("/usr/bin/ssh-keygen", ["-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", rsa]).status, 0)
        let rsaProvider = try SFTPTestServer.provider(server, options: ["key": rsa])
        let e3 = await SFTPTestServer.expectError(.denied) { _ = try await rsaProvider.item(for: .rootContainer) }
        XCTAssertTrue(e3?.detail.contains("is an RSA key") == true, e3?.detail ?? "")
    }

    func testServerDownIsUnreachable() async throws {
        let p = try SFTPTestServer.provider(server, port: try FreePort.next())
        let error = await SFTPTestServer.expectError(.unreachable) { _ = try await p.item(for: .rootContainer) }
        XCTAssertTrue(error?.description.contains("sftp://") == true, error?.description ?? "")
    }

    func testOptionsAreChecked() throws {
        XCTAssertThrowsError(try SFTPTestServer.provider(server, options: ["keyy": "x"]))
        XCTAssertThrowsError(try SFTPTestServer.provider(server, options: ["key": "/no/such/key"]))
        XCTAssertThrowsError(try SFTPTestServer.provider(server, options: ["timezone": "Mars/Olympus"]))
        XCTAssertNoThrow(try SFTPTestServer.provider(server, options: ["timezone": "Europe/Berlin"]))
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: try RemoteURL("sftp://u@127.0.0.1/~/files"),
                                                                          options: ["key": server.clientKey])))
    }
}
