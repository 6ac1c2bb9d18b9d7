import Foundation
import XCTest
import FavFSCore
import Providers
import TestSupport

/// The `ConformanceServer` plumbing for Favart: the remote it gives works through the factory,
/// seeding and server-side checks see the same files, and the traits hold.
final class FavartConformanceServerTests: XCTestCase {
    private let server = FavartConformanceServer.shared
    private let folder = "conf-\(UUID().uuidString.prefix(8))"

    override func setUpWithError() throws {
        guard FavartServer.python != nil else {
            if TestEnvironment.isCI { XCTFail("python3 is not on PATH and CI=true"); return }
            throw XCTSkip("python3 is not on PATH")
        }
        try server.start()
        try server.start()  // idempotent
    }

    private func provider(_ remote: ConformanceRemote) throws -> any WritableProvider {
        let p = try ProviderFactory.make(RemoteConfiguration(url: RemoteURL(remote.url), options: remote.options, secret: remote.secret))
        return try XCTUnwrap(p as? any WritableProvider)
    }

    func testRemoteSeedAndChecks() async throws {
        let provider = try provider(server.remote())
        let name = server.fileName("a b")
        XCTAssertEqual(name, "a b.jpg")
        try server.seed(files: ["\(folder)/\(name)": Data("seeded".utf8)], folders: ["\(folder)/empty"])
        let listed = try await provider.enumerateAll(in: ItemIdentifier("/\(folder)"))
        XCTAssertEqual(listed.map(\.name), ["a b.jpg", "empty"])
        XCTAssertTrue(try server.exists("\(folder)/empty"))
        XCTAssertEqual(try server.contents(of: "\(folder)/\(name)"), Data("seeded".utf8))

        // A conflict: the server-side overwrite changes the (size) version.
        let before = try await provider.item(for: ItemIdentifier("/\(folder)/\(name)"))
        try server.overwrite("\(folder)/\(name)", with: Data("overwritten".utf8))
        let after = try await provider.item(for: ItemIdentifier("/\(folder)/\(name)"))
        XCTAssertNotEqual(after.version, before.version)
        let temp = FavartTempFiles()
        do {
            _ = try await provider.upload(before.identifier, from: temp.source(Data("mine".utf8)), precondition: .mustMatch(before.version!))
            XCTFail("overwrote a changed file")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .versionChanged)
        }
        // Same size would be no new version: refused loudly rather than a silent non-conflict.
        XCTAssertThrowsError(try server.overwrite("\(folder)/\(name)", with: Data("OVERWRITTEN".utf8)))
    }

    func testTraitsAndOtherRemotes() async throws {
        let t = server.traits
        XCTAssertTrue(t.writable)
        XCTAssertFalse(t.symlinks)
        XCTAssertFalse(t.keepsModified)
        XCTAssertNil(t.modifiedPrecision)
        XCTAssertFalse(t.hasAuthentication)
        XCTAssertEqual(t.maxUploadSize, FavartProvider.maxUploadSize)
        XCTAssertNil(server.remoteWithWrongCredentials())
        let down = try provider(try XCTUnwrap(try server.remoteThatIsDown()))
        do {
            _ = try await down.enumerateItems(in: .rootContainer, page: nil)
            XCTFail("listed a server that is down")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .unreachable)
        }
    }
}
