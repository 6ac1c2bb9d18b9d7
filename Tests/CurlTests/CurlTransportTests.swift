import Foundation
import XCTest
@testable import Curl
import TestSupport

/// The transport against a real Apache on loopback.
final class CurlTransportTests: XCTestCase {
    private var server: ApacheServer!
    private var transport: CurlTransport!

    override func setUpWithError() throws {
        server = try ServerRequirement.apache()
        try Data("hello, world\n".utf8).write(to: server.documentRoot.appendingPathComponent("hello.txt"))
        try Self.pattern(count: 100_000).write(to: server.documentRoot.appendingPathComponent("pattern.bin"))
        try server.start()
        transport = CurlTransport()
    }

    override func tearDown() {
        transport = nil
        server?.remove()
        server = nil
    }

    /// Bytes whose value depends on their offset, so misplaced bytes show.
    static func pattern(count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251) })
    }

    private func url(_ path: String) -> String { server.baseURL + path }

    func testGetReturnsBody() async throws {
        let r = try await transport.perform(CurlRequest(url: url("hello.txt")))
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(String(decoding: r.body, as: UTF8.self), "hello, world\n")
        XCTAssertEqual(r.headers["content-length"], "13")
        XCTAssertNotNil(r.headers["etag"])
    }

    /// A body longer than the request's `maxBodyBytes` ends the transfer with `.bodyTooLarge`,
    /// saying so; one within it is whole; the connection serves the next request.
    func testABodyPastItsLimitEndsTheTransfer() async throws {
        var capped = CurlRequest(url: url("pattern.bin"))
        capped.maxBodyBytes = 50_000
        do {
            let r = try await transport.perform(capped)
            XCTFail("a 100,000-byte body kept under a 50,000-byte limit: \(r.body.count) bytes")
        } catch let e as TransportError {
            XCTAssertEqual(e.kind, .bodyTooLarge)
            XCTAssertTrue(e.message.contains("50000 bytes"), e.message)
        }
        capped.maxBodyBytes = 100_000
        let whole = try await transport.perform(capped)
        XCTAssertEqual(whole.body, Self.pattern(count: 100_000))
        let next = try await transport.perform(CurlRequest(url: url("hello.txt")))
        XCTAssertEqual(String(decoding: next.body, as: UTF8.self), "hello, world\n")
    }

    func testRangeGetGives206AndExactBytes() async throws {
        let r = try await transport.perform(CurlRequest(url: url("pattern.bin"), headers: [CurlHeader("Range", "bytes=1000-1999")]))
        XCTAssertEqual(r.status, 206)
        XCTAssertEqual(r.headers["content-range"], "bytes 1000-1999/100000")
        XCTAssertEqual(r.body, Self.pattern(count: 100_000).subdata(in: 1000..<2000))
    }

    func testDownloadWritesAtOffset() async throws {
        let (path, fd) = try tempFile()
        defer { close(fd); unlink(path) }
        let r = try await transport.download(CurlRequest(url: url("pattern.bin"), headers: [CurlHeader("Range", "bytes=5000-59999")]),
                                             into: fd, at: 5000)
        XCTAssertEqual(r.status, 206)
        XCTAssertEqual(r.bytesWritten, 55_000)
        XCTAssertTrue(r.body.isEmpty)
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(written.count, 60_000)
        XCTAssertEqual(written.subdata(in: 5000..<60_000), Self.pattern(count: 100_000).subdata(in: 5000..<60_000))
        XCTAssertEqual(written.prefix(5000), Data(count: 5000))
    }

    func testDownloadRangeFollowsResponse() async throws {
        let (path, fd) = try tempFile()
        defer { close(fd); unlink(path) }
        // 206: written at the Content-Range start.
        let ranged = try await transport.downloadRange(CurlRequest(url: url("pattern.bin"), headers: [CurlHeader("Range", "bytes=10-19")]),
                                                       into: fd, requestedStart: 10)
        XCTAssertEqual(ranged.response.status, 206)
        XCTAssertEqual(ranged.writtenAt, 10)
        // 200 (no Range sent, as from a server ignoring it): written from 0.
        let whole = try await transport.downloadRange(CurlRequest(url: url("hello.txt")), into: fd, requestedStart: 3)
        XCTAssertEqual(whole.response.status, 200)
        XCTAssertEqual(whole.writtenAt, 0)
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(written.prefix(13), Data("hello, world\n".utf8))
    }

    func testNotFoundBodyIsReturnedAndNothingWritten() async throws {
        let (path, fd) = try tempFile()
        defer { close(fd); unlink(path) }
        let r = try await transport.download(CurlRequest(url: url("missing.txt")), into: fd, at: 0)
        XCTAssertEqual(r.status, 404)
        XCTAssertEqual(r.bytesWritten, 0)
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("Not Found"))
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, 0)
    }

    func testRefusedWriteIsWriteFailedWithErrno() async throws {
        let (path, fd) = try tempFile()
        close(fd)
        let readOnly = open(path, O_RDONLY)
        defer { close(readOnly); unlink(path) }
        do {
            _ = try await transport.download(CurlRequest(url: url("pattern.bin")), into: readOnly, at: 0)
            XCTFail("expected a write failure")
        } catch let error as TransportError {
            XCTAssertEqual(error.kind, .writeFailed, "\(error)")
            XCTAssertEqual(error.errno, EBADF)
        }
    }

    func testPutAndPropfindWithBody() async throws {
        let put = try await transport.perform(CurlRequest(method: "PUT", url: url("new.txt"), body: Data("uploaded".utf8)))
        XCTAssertEqual(put.status, 201)
        XCTAssertEqual(try String(contentsOf: server.documentRoot.appendingPathComponent("new.txt"), encoding: .utf8), "uploaded")
        let body = #"<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getcontentlength/></D:prop></D:propfind>"#
        let r = try await transport.perform(CurlRequest(method: "PROPFIND", url: url(""),
                                                        headers: [CurlHeader("Depth", "1"), CurlHeader("Content-Type", "application/xml")],
                                                        body: Data(body.utf8)))
        XCTAssertEqual(r.status, 207)
        let xml = String(decoding: r.body, as: UTF8.self)
        XCTAssertTrue(xml.contains("new.txt"), xml)
        XCTAssertTrue(xml.contains("getcontentlength>8<"), xml)
    }

    func testStoppedServerFailsFastWithCouldNotConnect() async throws {
        server.stop()
        let start = Date()
        do {
            _ = try await transport.perform(CurlRequest(url: url("hello.txt")))
            XCTFail("expected an error")
        } catch let error as TransportError {
            XCTAssertEqual(error.kind, .couldNotConnect, "\(error)")
            XCTAssertTrue(error.url.hasSuffix("/files/hello.txt"))
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
    }

    func testSilentPeerTimesOutAtTheLowSpeedLimit() async throws {
        // A socket that listens and never answers: the kernel completes the handshake, nothing
        // ever arrives, so only the low-speed limit can end the transfer.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        XCTAssertTrue(bound)
        var options = TransportOptions()
        options.lowSpeedTime = 1
        let impatient = CurlTransport(options: options)
        let start = Date()
        do {
            _ = try await impatient.perform(CurlRequest(url: "http://127.0.0.1:\(UInt16(bigEndian: addr.sin_port))/x"))
            XCTFail("expected a timeout")
        } catch let error as TransportError {
            XCTAssertEqual(error.kind, .timedOut, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
    }

    func testFiftyConcurrentRequestsComplete() async throws {
        let transport = self.transport!
        let u = url("pattern.bin")
        let expected = Self.pattern(count: 100_000)
        let results = try await withThrowingTaskGroup(of: (Int, Int, Bool).self) { group in
            for i in 0..<50 {
                group.addTask {
                    let r = try await transport.perform(CurlRequest(url: u, headers: [CurlHeader("Range", "bytes=\(i * 100)-\(i * 100 + 99)")]))
                    return (i, r.status, r.body == expected.subdata(in: i * 100..<i * 100 + 100))
                }
            }
            var all: [Int: (Int, Bool)] = [:]
            for try await (i, s, ok) in group { all[i] = (s, ok) }
            return all
        }
        XCTAssertEqual(results.count, 50)
        XCTAssertTrue(results.values.allSatisfy { $0.0 == 206 && $0.1 })
    }

    func testTransportsComeAndGo() async throws {
        // Each transport owns a thread and a multi handle; releasing it must free both cleanly.
        for _ in 0..<20 {
            let t = CurlTransport()
            let r = try await t.perform(CurlRequest(url: url("hello.txt")))
            XCTAssertEqual(r.status, 200)
        }
    }

    func testConnectionsAreReused() async throws {
        let before = transport.connectionsOpened
        for _ in 0..<20 {
            let r = try await transport.perform(CurlRequest(url: url("hello.txt")))
            XCTAssertEqual(r.status, 200)
        }
        // The counter counts: the first request had to connect; the other 19 reused it.
        XCTAssertGreaterThanOrEqual(transport.connectionsOpened - before, 1)
        XCTAssertLessThanOrEqual(transport.connectionsOpened - before, 2)
    }

    func testCancelledTaskThrowsCancelledPromptly() async throws {
        // A sparse 8 GiB file: far more than loopback moves before the cancel lands.
        let big = server.documentRoot.appendingPathComponent("big.bin")
        XCTAssertTrue(FileManager.default.createFile(atPath: big.path, contents: nil))
        let h = try FileHandle(forWritingTo: big)
        try h.truncate(atOffset: 8 << 30)
        try h.close()
        try server.fixOwnership()
        let (path, fd) = try tempFile()
        defer { close(fd); unlink(path) }
        let transport = self.transport!
        let u = url("big.bin")
        let task = Task { try await transport.download(CurlRequest(url: u), into: fd, at: 0) }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) == 0 {
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        let cancelledAt = Date()
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("expected cancellation")
        } catch let error as TransportError {
            XCTAssertEqual(error.kind, .cancelled)
        }
        XCTAssertLessThan(Date().timeIntervalSince(cancelledAt), 1)
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        XCTAssertGreaterThan(size, 0)
        XCTAssertLessThan(size, 8 << 30)
        // The transport still works afterwards.
        let r = try await transport.perform(CurlRequest(url: url("hello.txt")))
        XCTAssertEqual(r.status, 200)
    }

    func testAlreadyCancelledTaskNeverStarts() async throws {
        let transport = self.transport!
        let u = url("hello.txt")
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await transport.perform(CurlRequest(url: u))
        }
        task.cancel()
        do { _ = try await task.value; XCTFail("expected cancellation") } catch let e as TransportError {
            XCTAssertEqual(e.kind, .cancelled)
        }
    }

    func testCredentialsAreStrippedFromURLs() {
        XCTAssertEqual(CurlTransfer.stripCredentials("http://u:p@host:1/a@b"), "http://host:1/a@b")
        XCTAssertEqual(CurlTransfer.stripCredentials("http://host/x"), "http://host/x")
    }

    private func tempFile() throws -> (String, Int32) {
        let path = NSTemporaryDirectory() + "favfs-curl-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw ShellError("open \(path): \(String(cString: strerror(errno)))") }
        return (path, fd)
    }
}

/// Basic and Digest against Apache configured for each.
final class CurlAuthTests: XCTestCase {
    private func check(_ auth: ApacheServer.Auth, scheme: CurlCredentials.Scheme) async throws {
        let server = try ServerRequirement.apache(auth: auth)
        defer { server.remove() }
        try Data("secret\n".utf8).write(to: server.documentRoot.appendingPathComponent("s.txt"))
        try server.start()
        let transport = CurlTransport()
        let u = server.baseURL + "s.txt"
        for s in [scheme, .any] {
            let ok = try await transport.perform(CurlRequest(url: u, credentials: CurlCredentials(user: "alice", password: "pw1", scheme: s)))
            XCTAssertEqual(ok.status, 200, "\(s)")
            XCTAssertEqual(String(decoding: ok.body, as: UTF8.self), "secret\n")
            let bad = try await transport.perform(CurlRequest(url: u, credentials: CurlCredentials(user: "alice", password: "nope", scheme: s)))
            XCTAssertEqual(bad.status, 401, "\(s)")
        }
        let none = try await transport.perform(CurlRequest(url: u))
        XCTAssertEqual(none.status, 401)
    }

    func testBasicAuth() async throws { try await check(.basic(user: "alice", password: "pw1"), scheme: .basic) }
    func testDigestAuth() async throws { try await check(.digest(user: "alice", password: "pw1"), scheme: .digest) }
}
