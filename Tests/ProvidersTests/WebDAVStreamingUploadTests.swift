import Foundation
import XCTest
import Curl
@testable import FavFSCore
import Providers
import TestSupport

/// A new file uploaded while it is written (`StreamingUploadProvider`): one chunked PUT fed from
/// a file that grows, against a real Apache mod_dav.
final class WebDAVStreamingUploadTests: XCTestCase {
    private var server: ApacheServer!
    private var provider: WebDAVProvider!
    private var path = ""
    private var fd: Int32 = -1

    override func setUpWithError() throws {
        server = try ServerRequirement.apache()
        try Data("taken\n".utf8).write(to: server.documentRoot.appendingPathComponent("taken.bin"))
        try server.start()
        provider = WebDAVWritingTests.makeProvider(server)
        path = NSTemporaryDirectory() + "favfs-stream-\(UUID().uuidString)"
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
    }

    override func tearDown() {
        close(fd)
        unlink(path)
        provider = nil
        server?.remove()
        server = nil
    }

    /// Bytes whose value depends on their offset, so misplaced bytes show.
    static func pattern(count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251) })
    }

    /// Appends `data` to the source file, as a program writing into the mount does.
    private func append(_ data: Data, at offset: Int64) {
        let n = data.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        XCTAssertEqual(n, data.count)
    }

    private func served(_ name: String) -> Data? {
        try? Data(contentsOf: server.documentRoot.appendingPathComponent(name))
    }

    func testTheBodyFollowsTheFileAsItGrowsAndEndsWithIt() async throws {
        let data = Self.pattern(count: 6_000_003)
        let pieces = stride(from: 0, to: data.count, by: 1_000_000).map { $0..<min(data.count, $0 + 1_000_000) }
        append(data[pieces[0]], at: 0)
        let content = GrowingContent(length: Int64(pieces[0].count))
        let upload = Task { [provider, fd] in try await provider!.uploadStreaming(ItemIdentifier("/grown.bin"), fd: fd, content: content) }
        for piece in pieces.dropFirst() {
            // The transfer has sent what there was and waits (paused) for more.
            try await Task.sleep(nanoseconds: 150_000_000)
            append(data[piece], at: Int64(piece.lowerBound))
            content.extend(to: Int64(piece.upperBound))
        }
        try await Task.sleep(nanoseconds: 150_000_000)
        XCTAssertNil(served("grown.bin"), "Apache renames the upload into place only when it is complete")
        XCTAssertTrue(content.finish(length: Int64(data.count)))
        let item = try await upload.value
        XCTAssertEqual(item.size, Int64(data.count))
        XCTAssertNotNil(item.version)
        XCTAssertEqual(served("grown.bin"), data)
        let puts = server.accessLogLines { $0.contains { $0.hasPrefix("PUT /files/grown.bin") } }
            .filter { $0.hasPrefix("PUT /files/grown.bin") }
        XCTAssertEqual(puts.count, 1, "one request for the whole file: \(puts)")
    }

    func testAnAbandonedStreamFailsAndLeavesNothingAtTheServer() async throws {
        let data = Self.pattern(count: 2_000_000)
        append(data, at: 0)
        let content = GrowingContent(length: Int64(data.count))
        let upload = Task { [provider, fd] in try await provider!.uploadStreaming(ItemIdentifier("/gone.bin"), fd: fd, content: content) }
        try await Task.sleep(nanoseconds: 300_000_000)
        content.abandon("a write went back over what was appended")
        do {
            _ = try await upload.value
            XCTFail("an abandoned stream must not look uploaded")
        } catch let error as ProviderError {
            XCTAssertTrue(error.description.contains("went back over"), "\(error)")
        }
        XCTAssertNil(served("gone.bin"))
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: server.documentRoot.path)
            .allSatisfy { !$0.contains("gone") && !$0.hasPrefix(".davfs") }, "no partial file or temp file is left")
    }

    func testAFinishAtAnotherLengthThanAppendedAbandons() async throws {
        let data = Self.pattern(count: 100_000)
        append(data, at: 0)
        let content = GrowingContent(length: 50_000)
        XCTAssertFalse(content.finish(length: 100_000))
        do {
            _ = try await provider.uploadStreaming(ItemIdentifier("/short.bin"), fd: fd, content: content)
            XCTFail("the content did not end where it was appended to")
        } catch is ProviderError {}
        XCTAssertNil(served("short.bin"))
    }

    func testAServerThatRefusesChunkedBodiesIsNotAskedAgain() async throws {
        // Apache answering 411 Length Required to a chunked body, as servers that need the length first do.
        let strict = try ApacheServer(extraConfig: """
            LoadModule rewrite_module /usr/lib/apache2/modules/mod_rewrite.so
            RewriteEngine On
            RewriteCond %{HTTP:Transfer-Encoding} chunked [NC]
            RewriteRule ^ - [R=411]
            """)
        try strict.start()
        defer { strict.remove() }
        let p = WebDAVWritingTests.makeProvider(strict)
        let (data, content) = wholeFileWritten(count: 1_000_000)
        do {
            _ = try await p.uploadStreaming(ItemIdentifier("/first.bin"), fd: fd, content: content)
            XCTFail("a 411 must fail the stream")
        } catch let error as ProviderError {
            XCTAssertEqual(error.status, 411, "\(error)")
        }
        do {
            _ = try await p.uploadStreaming(ItemIdentifier("/second.bin"), fd: fd, content: content)
            XCTFail("the second stream must not be tried")
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, .notSupported, "\(error)")
        }
        let puts = strict.accessLogLines { $0.contains { $0.hasPrefix("PUT ") } }.filter { $0.hasPrefix("PUT ") }
        XCTAssertEqual(puts.count, 1, "one refused PUT, then none: \(puts)")
        // The ordinary upload (a length) still works there.
        let whole = try await p.upload(ItemIdentifier("/second.bin"), from: ContentSource(fd: fd, length: Int64(data.count)),
                                       precondition: .mustNotExist)
        XCTAssertEqual(whole.size, Int64(data.count))
    }

    func testANameTakenAtTheServerIsExistsAndKeepsItsContent() async throws {
        let (_, content) = wholeFileWritten(count: 1_000_000)
        do {
            _ = try await provider.uploadStreaming(ItemIdentifier("/taken.bin"), fd: fd, content: content)
            XCTFail("If-None-Match: * must refuse an existing name")
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, .exists, "\(error)")
        }
        XCTAssertEqual(served("taken.bin"), Data("taken\n".utf8))
    }

    /// `count` bytes written to the cache file and the stream told they are all there.
    private func wholeFileWritten(count: Int) -> (Data, GrowingContent) {
        let data = Self.pattern(count: count)
        append(data, at: 0)
        let content = GrowingContent(length: Int64(data.count))
        content.finish(length: Int64(data.count))
        return (data, content)
    }
}
