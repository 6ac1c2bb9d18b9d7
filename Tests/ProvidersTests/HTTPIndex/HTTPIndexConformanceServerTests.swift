import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// The two HTTP index conformance servers do what the conformance suite will ask of them: seed,
/// list with exact sizes and mtimes within the stated precision, read, detect a change, and give
/// the right errors for wrong credentials and a stopped server — all through `ProviderFactory`,
/// from `remote()` as favfs would get it.
final class HTTPIndexConformanceServerTests: XCTestCase {
    /// The shared servers outlive their tests; Apache runs as a daemon and would outlive the process.
    override class func tearDown() {
        ApacheConformanceServer.httpIndex.stop()
        NginxIndexConformanceServer.shared.stop()
        super.tearDown()
    }

    func testApacheAutoindex() async throws {
        try ServerRequirement.apache().remove()  // skip (or fail under CI) without apache2
        try await check(ApacheConformanceServer.httpIndex)
    }

    func testNginxIndexMetadata() async throws {
        guard NginxServer.isAvailable else {
            if TestEnvironment.isCI { throw ShellError("CI=true and nginx is missing") }
            throw XCTSkip("nginx is missing")
        }
        try await check(NginxIndexConformanceServer.shared)
    }

    private func provider(_ remote: ConformanceRemote) throws -> any Provider {
        var configuration = RemoteConfiguration(url: try RemoteURL(remote.url), options: remote.options, secret: remote.secret)
        configuration.name = nil
        var transport = TransportOptions()
        transport.connectTimeout = 5
        return try ProviderFactory.make(configuration, transport: transport)
    }

    private func check(_ server: any ConformanceServer) async throws {
        try server.start()
        let base = "check-\(UUID().uuidString.prefix(6))"
        let names = ["a b", "ünïcödé ☃", "#hash", "100%", "what?", "a+b", "it's", "a&b", "semi;colon", "co:lon", "tab\there", "trailing dots..."]
        var files: [String: Data] = [:]
        for name in names {
            files["\(base)/\(name)"] = Data("file \(name)\n".utf8)
            files["\(base)/\(name) folder/inside"] = Data("inside \(name)\n".utf8)
        }
        files["\(base)/empty"] = Data()
        try server.seed(files: files, folders: ["\(base)/empty folder"])
        XCTAssertTrue(try server.exists("\(base)/a b"))
        XCTAssertEqual(try server.contents(of: "\(base)/a&b"), Data("file a&b\n".utf8))

        let p = try provider(server.remote())
        XCTAssertFalse(p is any WritableProvider)
        let folder = ItemIdentifier.rootContainer.child(base)
        let items = try await p.enumerateAll(in: folder)
        XCTAssertEqual(Set(items.map(\.name)), Set(names + names.map { "\($0) folder" } + ["empty", "empty folder"]), server.name)
        let precision = try XCTUnwrap(server.traits.modifiedPrecision)
        for item in items where !item.isFolder {
            XCTAssertEqual(item.size, Int64(files["\(base)/\(item.name)"]!.count), item.name)
            XCTAssertEqual(item.modified ?? 0, Date().addingTimeInterval(-3600).timeIntervalSince1970, accuracy: precision + 30, item.name)
            let again = try await p.item(for: item.identifier)
            XCTAssertEqual(again, item, "\(server.name): item(for:) vs listing for \(item.name)")
        }
        for name in names {
            let inner = try await p.enumerateAll(in: folder.child("\(name) folder"))
            XCTAssertEqual(inner.map(\.name), ["inside"], name)
        }

        // Read, change at the server, read the old version again: versionChanged.
        let target = try await p.item(for: folder.child("semi;colon"))
        let path = NSTemporaryDirectory() + "favfs-conf-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd); unlink(path) }
        let got = try await p.readContents(of: target, range: 0..<target.size, into: ContentSink(fd: fd))
        XCTAssertEqual(got, 0..<target.size)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data("file semi;colon\n".utf8))
        try server.overwrite("\(base)/semi;colon", with: Data("other bytes, other size\n".utf8))
        do {
            _ = try await p.readContents(of: target, range: 0..<target.size, into: ContentSink(fd: fd))
            XCTFail("\(server.name): a changed file was read under its old version")
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, .versionChanged, "\(error)")
        }

        if let wrong = server.remoteWithWrongCredentials() {
            do {
                _ = try await provider(wrong).enumerateAll(in: folder)
                XCTFail("wrong credentials listed")
            } catch let error as ProviderError {
                XCTAssertEqual(error.kind, .denied, "\(error)")
            }
        }
        if let down = try server.remoteThatIsDown() {
            do {
                _ = try await provider(down).enumerateAll(in: folder)
                XCTFail("a stopped server listed")
            } catch let error as ProviderError {
                XCTAssertTrue(error.kind == .unreachable || error.kind == .timedOut, "\(error)")
            }
        }
    }
}
