import Foundation
import XCTest
@testable import Curl
import TestSupport

/// `CurlTransport.upload`: bodies streamed from a file descriptor, against a real Apache.
final class CurlUploadTests: XCTestCase {
    private var server: ApacheServer!
    private var transport: CurlTransport!
    private var tempPaths: [String] = []

    override func setUpWithError() throws {
        server = try ServerRequirement.apache()
        try server.start()
        transport = CurlTransport()
    }

    override func tearDown() {
        transport = nil
        server?.remove()
        server = nil
        for path in tempPaths { unlink(path) }
    }

    private func url(_ path: String) -> String { server.baseURL + path }

    /// A temp file holding `data`, opened with `flags`.
    private func source(_ data: Data, flags: Int32 = O_RDONLY) throws -> Int32 {
        let path = NSTemporaryDirectory() + "favfs-upload-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        tempPaths.append(path)
        let fd = open(path, flags)
        guard fd >= 0 else { throw ShellError("open \(path): \(String(cString: strerror(errno)))") }
        return fd
    }

    private func served(_ name: String) -> Data? {
        try? Data(contentsOf: server.documentRoot.appendingPathComponent(name))
    }

    func testPutStreamsTheFileAndReplaces() async throws {
        let data = CurlTransportTests.pattern(count: 3_000_001)
        let fd = try source(data)
        defer { close(fd) }
        let created = try await transport.upload(CurlRequest(method: "PUT", url: url("up.bin")), from: fd, length: Int64(data.count))
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(served("up.bin"), data)

        let smaller = Data("second".utf8)
        let fd2 = try source(smaller)
        defer { close(fd2) }
        let replaced = try await transport.upload(CurlRequest(method: "PUT", url: url("up.bin")), from: fd2, length: Int64(smaller.count))
        XCTAssertEqual(replaced.status, 204)
        XCTAssertEqual(served("up.bin"), smaller)
        // No "Expect: 100-continue" round trip: one request per upload in the log (Apache may
        // write a line just after the response).
        var puts: [String] = []
        for _ in 0..<50 {
            puts = server.accessLogLines().filter { $0.hasPrefix("PUT /files/up.bin") }
            if puts.count >= 2 { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTAssertEqual(puts.map { $0.split(separator: " ")[2] }, ["201", "204"], "\(server.accessLogLines())")
    }

    func testOnlyLengthBytesAreSent() async throws {
        let fd = try source(Data("0123456789".utf8))
        defer { close(fd) }
        let r = try await transport.upload(CurlRequest(method: "PUT", url: url("part.txt")), from: fd, length: 4)
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(served("part.txt"), Data("0123".utf8))
    }

    func testUploadFromAnOffsetSendsThatSliceOnly() async throws {
        let data = CurlTransportTests.pattern(count: 1_000_003)
        let fd = try source(data)
        defer { close(fd) }
        let r = try await transport.upload(CurlRequest(method: "PUT", url: url("slice.bin")), from: fd, length: 300_000, offset: 500_001)
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(served("slice.bin"), data[500_001..<800_001])
    }

    func testEmptyUpload() async throws {
        let fd = try source(Data())
        defer { close(fd) }
        let r = try await transport.upload(CurlRequest(method: "PUT", url: url("empty.txt")), from: fd, length: 0)
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(served("empty.txt"), Data())
    }

    func testUnreadableSourceAbortsWithReadFailed() async throws {
        // A write-only descriptor: pread fails with EBADF.
        let fd = try source(Data("some bytes".utf8), flags: O_WRONLY)
        defer { close(fd) }
        do {
            _ = try await transport.upload(CurlRequest(method: "PUT", url: url("bad.txt")), from: fd, length: 10)
            XCTFail("expected readFailed")
        } catch let error as TransportError {
            XCTAssertEqual(error.kind, .readFailed, "\(error)")
            XCTAssertEqual(error.errno, EBADF)
            XCTAssertTrue(error.message.contains("reading the upload source failed"), error.message)
        }
        // The transport still works.
        let r = try await transport.perform(CurlRequest(method: "PROPFIND", url: url(""), headers: [CurlHeader("Depth", "0")]))
        XCTAssertEqual(r.status, 207)
    }

    func testSourceShorterThanAnnouncedAborts() async throws {
        let fd = try source(Data("short".utf8))
        defer { close(fd) }
        do {
            _ = try await transport.upload(CurlRequest(method: "PUT", url: url("short.txt")), from: fd, length: 100_000)
            XCTFail("expected readFailed")
        } catch let error as TransportError {
            XCTAssertEqual(error.kind, .readFailed, "\(error)")
            XCTAssertNil(error.errno)
            XCTAssertTrue(error.message.contains("ended at byte 5 of 100000"), error.message)
        }
    }

    func testStoppedServerFailsFast() async throws {
        server.stop()
        let fd = try source(Data("x".utf8))
        defer { close(fd) }
        let start = Date()
        do {
            _ = try await transport.upload(CurlRequest(method: "PUT", url: url("x.txt")), from: fd, length: 1)
            XCTFail("expected an error")
        } catch let error as TransportError {
            XCTAssertEqual(error.kind, .couldNotConnect, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
    }

    func testCancelledUploadThrowsCancelled() async throws {
        // A sparse 900 MiB source (Apache refuses bodies over 1 GiB by default, LimitRequestBody):
        // more than loopback moves before the cancel lands.
        let path = NSTemporaryDirectory() + "favfs-upload-big-\(UUID().uuidString)"
        tempPaths.append(path)
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        XCTAssertEqual(ftruncate(fd, 900 << 20), 0)
        let transport = self.transport!
        let u = url("big.bin")
        let task = Task { try await transport.upload(CurlRequest(method: "PUT", url: u), from: fd, length: 900 << 20) }
        try await Task.sleep(nanoseconds: 50_000_000)
        let cancelledAt = Date()
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("expected cancellation")
        } catch let error as TransportError {
            XCTAssertEqual(error.kind, .cancelled, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(cancelledAt), 1)
        // The transport still works afterwards.
        let r = try await transport.perform(CurlRequest(method: "PROPFIND", url: url(""), headers: [CurlHeader("Depth", "0")]))
        XCTAssertEqual(r.status, 207)
    }
}

/// Uploads with Basic and Digest: with `.any` (and Digest) curl must rewind the body after the
/// challenge, through the seek callback.
final class CurlUploadAuthTests: XCTestCase {
    private func check(_ auth: ApacheServer.Auth, scheme: CurlCredentials.Scheme) async throws {
        let server = try ServerRequirement.apache(auth: auth)
        defer { server.remove() }
        try server.start()
        let transport = CurlTransport()
        let data = CurlTransportTests.pattern(count: 300_000)
        let path = NSTemporaryDirectory() + "favfs-upload-auth-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        for (i, s) in [scheme, .any].enumerated() {
            let u = server.baseURL + "up\(i).bin"
            let r = try await transport.upload(CurlRequest(method: "PUT", url: u, credentials: CurlCredentials(user: "alice", password: "pw1", scheme: s)),
                                               from: fd, length: Int64(data.count))
            XCTAssertEqual(r.status, 201, "\(s)")
            XCTAssertEqual(try Data(contentsOf: server.documentRoot.appendingPathComponent("up\(i).bin")), data, "\(s)")
            let bad = try await transport.upload(CurlRequest(method: "PUT", url: u, credentials: CurlCredentials(user: "alice", password: "nope", scheme: s)),
                                                 from: fd, length: Int64(data.count))
            XCTAssertEqual(bad.status, 401, "\(s)")
        }
    }

    func testBasicUpload() async throws { try await check(.basic(user: "alice", password: "pw1"), scheme: .basic) }
    func testDigestUpload() async throws { try await check(.digest(user: "alice", password: "pw1"), scheme: .digest) }
}
