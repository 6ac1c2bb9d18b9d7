import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// Explicit FTPS (AUTH TLS, PROT P; TLS required by the server) with a self-signed certificate.
final class FTPSTests: XCTestCase {
    private var server: FTPTestServer!

    override func setUp() async throws {
        server = try FTPServers.shared.server("tls", .init(tls: true))
    }

    func testTrustedCertificateWorksForListingReadingAndWriting() async throws {
        let provider = try FTPTest.provider(server.url(), options: ["ca_certificate": server.certificate.path])
        let name = "s-\(UUID().uuidString.prefix(8))"
        let base = ItemIdentifier("/" + name)
        try DirectorySeeding.seed(server.documentRoot, files: ["\(name)/secret.txt": Data("over TLS\n".utf8)], folders: [])
        let items = try await provider.enumerateAll(in: base)
        XCTAssertEqual(items.map(\.name), ["secret.txt"])
        let sink = FTPTest.Sink()
        _ = try await provider.readContents(of: items[0], range: 5..<100, into: sink.sink)
        XCTAssertEqual(sink.contents.dropFirst(5), Data("over TLS\n".utf8).dropFirst(5))
        let uploaded = try await provider.upload(base.child("up.txt"), from: FTPTest.source(Data("up\n".utf8), self), precondition: .mustNotExist)
        XCTAssertEqual(DirectorySeeding.contents(server.documentRoot, "\(name)/up.txt"), Data("up\n".utf8))
        let stat = try await provider.item(for: base.child("up.txt"))
        XCTAssertEqual(stat, uploaded)
    }

    func testUntrustedCertificateIsAClearTLSError() async throws {
        let provider = try FTPTest.provider(server.url())
        let error = await FTPTest.expectError(.unreachable) { try await provider.enumerateAll(in: .rootContainer) }
        XCTAssertTrue(error?.detail.contains("TLS") == true, "\(String(describing: error))")
        XCTAssertTrue(error?.detail.contains("certificate") == true, "\(String(describing: error))")
        XCTAssertTrue(error?.detail.contains("ca_certificate") == true, "\(String(describing: error))")
    }

    func testVerificationCanBeTurnedOffExplicitly() async throws {
        let provider = try FTPTest.provider(server.url(), options: ["tls_verify": "false"])
        let root = try await provider.item(for: .rootContainer)
        XCTAssertEqual(root.kind, .folder)
    }

    func testWrongPasswordOverTLSIsDenied() async throws {
        let provider = try FTPTest.provider(server.url(), options: ["ca_certificate": server.certificate.path], secret: "wrong")
        await FTPTest.expectError(.denied) { try await provider.enumerateAll(in: .rootContainer) }
    }

    func testPlainFTPToATLSOnlyServerIsRefused() async throws {
        // ftp:// without TLS: the server wants AUTH TLS before USER.
        let url = server.url().replacingOccurrences(of: "ftps://", with: "ftp://")
        let provider = try FTPTest.provider(url)
        await FTPTest.expectError(.denied) { try await provider.enumerateAll(in: .rootContainer) }
    }

    func testTLSRequiredAgainstAPlainServerFails() async throws {
        let plain = try FTPServers.shared.server("plain", .init())
        let provider = try FTPTest.provider(plain.url(), options: ["tls": "required"])
        let error = await FTPTest.expectError(.unreachable) { try await provider.enumerateAll(in: .rootContainer) }
        XCTAssertTrue(error?.detail.contains("TLS") == true, "\(String(describing: error))")
    }

    func testFTPSServerDownIsUnreachable() async throws {
        let provider = try FTPTest.provider("ftps://favfs@127.0.0.1:\(try FreePort.next())/files/",
                                            options: ["ca_certificate": server.certificate.path])
        await FTPTest.expectError(.unreachable) { try await provider.item(for: .rootContainer) }
    }
}

/// The conformance servers as the suite reaches them: through their remote URL and options.
final class FTPConformanceServerTests: XCTestCase {
    func testBothConformanceRemotesWork() async throws {
        try FTPTestServer.requireAvailable()
        for server in [FTPConformanceServer.shared, FTPConformanceServer.ftps] {
            try server.start()
            let dir = "c-\(UUID().uuidString.prefix(8))"
            try server.seed(files: ["\(dir)/a.txt": Data("A".utf8)], folders: ["\(dir)/empty"])
            let remote = server.remote()
            let provider = try FTPTest.provider(remote.url, options: remote.options, secret: remote.secret)
            let items = try await provider.enumerateAll(in: ItemIdentifier("/" + dir)).sorted { $0.name < $1.name }
            XCTAssertEqual(items.map(\.name), ["a.txt", "empty"], server.name)
            try server.overwrite("\(dir)/a.txt", with: Data("B".utf8))
            XCTAssertEqual(try server.contents(of: "\(dir)/a.txt"), Data("B".utf8))
            XCTAssertTrue(try server.exists("\(dir)/empty"))
            let wrong = server.remoteWithWrongCredentials()!
            let denied = try FTPTest.provider(wrong.url, options: wrong.options, secret: wrong.secret)
            await FTPTest.expectError(.denied) { try await denied.item(for: .rootContainer) }
            let down = try server.remoteThatIsDown()!
            let unreachable = try FTPTest.provider(down.url, options: down.options, secret: down.secret)
            await FTPTest.expectError(.unreachable) { try await unreachable.item(for: .rootContainer) }
        }
    }
}
