import Foundation
import XCTest
@testable import Curl
import TestSupport

/// The transport learns a server's auth scheme from its challenge and then sends Basic up front.
final class AuthSchemeMemoryTests: XCTestCase {
    func testChallengeParsing() {
        XCTAssertEqual(AuthSchemeMemory.scheme(ofChallenge: #"Basic realm="favfs""#), .basic)
        XCTAssertEqual(AuthSchemeMemory.scheme(ofChallenge: #"basic realm="a, Digest b", charset="UTF-8""#), .basic)
        XCTAssertEqual(AuthSchemeMemory.scheme(ofChallenge: #"Digest realm="favfs", nonce="x", algorithm=MD5, qop="auth""#), .negotiate)
        XCTAssertEqual(AuthSchemeMemory.scheme(ofChallenge: #"Basic realm="x", Digest realm="x", nonce="n""#), .negotiate)
        XCTAssertEqual(AuthSchemeMemory.scheme(ofChallenge: "Negotiate, NTLM"), .negotiate)
        XCTAssertEqual(AuthSchemeMemory.scheme(ofChallenge: ""), .negotiate)
    }

    func testOrigin() {
        XCTAssertEqual(AuthSchemeMemory.origin(of: "http://127.0.0.1:8080/dav/a%20b?x"), "http://127.0.0.1:8080")
        XCTAssertEqual(AuthSchemeMemory.origin(of: "HTTPS://u@Host/x"), "https://host")
        XCTAssertNil(AuthSchemeMemory.origin(of: "sftp://host/x"))
    }

    /// Against Apache asking for Basic: the first request pays the challenge, later ones do not;
    /// a PUT to a server not yet known is preceded by a bodiless probe and never challenged itself.
    func testBasicIsSentUpFrontOnceLearnt() async throws {
        let server = try ServerRequirement.apache(auth: .basic(user: "alice", password: "pw1"))
        defer { server.remove() }
        try Data("secret\n".utf8).write(to: server.documentRoot.appendingPathComponent("s.txt"))
        try server.start()
        let credentials = CurlCredentials(user: "alice", password: "pw1")

        let reader = CurlTransport()
        for _ in 0..<3 {
            let ok = try await reader.perform(CurlRequest(url: server.baseURL + "s.txt", credentials: credentials))
            XCTAssertEqual(ok.status, 200)
        }
        let writer = CurlTransport()
        let put = try await writer.perform(CurlRequest(method: "PUT", url: server.baseURL + "new.txt", body: Data("hello\n".utf8),
                                                       credentials: credentials))
        XCTAssertEqual(put.status, 201)
        let bad = try await writer.perform(CurlRequest(url: server.baseURL + "s.txt", credentials: CurlCredentials(user: "alice", password: "nope")))
        XCTAssertEqual(bad.status, 401, "a wrong password is still refused")

        let lines = server.accessLogLines(within: 10) { $0.count >= 7 }
        let gets = lines.filter { $0.hasPrefix("GET ") && $0.contains("/s.txt ") }.map { $0.split(separator: " ")[2] }
        XCTAssertEqual(gets, ["401", "200", "200", "200", "401"], "\(lines)")
        let puts = lines.filter { $0.hasPrefix("PUT ") }.map { $0.split(separator: " ")[2] }
        XCTAssertEqual(puts, ["201"], "the PUT's body went once, with credentials: \(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("HEAD ") && $0.contains("/new.txt 401") }, "\(lines)")
    }

    /// Digest needs its challenge: `.any` keeps negotiating, and still logs in.
    func testDigestKeepsNegotiating() async throws {
        let server = try ServerRequirement.apache(auth: .digest(user: "alice", password: "pw1"))
        defer { server.remove() }
        try Data("secret\n".utf8).write(to: server.documentRoot.appendingPathComponent("s.txt"))
        try server.start()
        let transport = CurlTransport()
        for _ in 0..<2 {
            let ok = try await transport.perform(CurlRequest(url: server.baseURL + "s.txt", credentials: CurlCredentials(user: "alice", password: "pw1")))
            XCTAssertEqual(ok.status, 200)
        }
        let put = try await transport.perform(CurlRequest(method: "PUT", url: server.baseURL + "new.txt", body: Data("x".utf8),
                                                          credentials: CurlCredentials(user: "alice", password: "pw1")))
        XCTAssertEqual(put.status, 201)
        XCTAssertEqual(transport.authSchemes.lookup(.init(origin: AuthSchemeMemory.origin(of: server.baseURL)!, user: "alice")), .negotiate)
    }

    /// WsgiDAV (cheroot) answers a 401 without reading a small request body, which then
    /// poisons the kept-alive connection: with credentials only after the challenge, PROPFINDs and
    /// small PUTs failed now and then with "Received HTTP/0.9 when not allowed".
    func testWsgiDAVConcurrentSmallRequests() async throws {
        let (server, base, credentials) = try startedWsgiDAV()
        defer { server.remove() }
        let transport = CurlTransport()
        let propfind = Data(#"<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><D:getcontentlength/><D:resourcetype/></D:prop></D:propfind>"#.utf8)
        // Bodies streamed from a file (as favfs uploads), of the sizes a copied tree has.
        let sizes = [7, 100, 4095, 70_000, 131_073, 3 * 1024 * 1024 + 5]
        let file = NSTemporaryDirectory() + "favfs-auth-\(UUID().uuidString)"
        defer { unlink(file) }
        try Data((0..<sizes.max()!).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: file))
        let fd = open(file, O_RDONLY)
        defer { close(fd) }
        // Several at once, as a `cp -r` into a mount sends them: the poisoned reply reaches
        // whichever request takes the connection next.
        let failures = await withTaskGroup(of: [String].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var failures: [String] = []
                    for i in 0..<15 {
                        let d = base + "w\(worker)-\(i)/"
                        do {
                            let mkcol = try await transport.perform(CurlRequest(method: "MKCOL", url: d, credentials: credentials))
                            if mkcol.status != 201 { failures.append("MKCOL \(d): \(mkcol.status)") }
                            let put = try await transport.upload(CurlRequest(method: "PUT", url: d + "f", credentials: credentials),
                                                                 from: fd, length: Int64(sizes[i % sizes.count]))
                            if ![201, 204].contains(put.status) { failures.append("PUT \(d)f: \(put.status)") }
                            let list = try await transport.perform(CurlRequest(method: "PROPFIND", url: d,
                                headers: [CurlHeader("Depth", "1"), CurlHeader("Content-Type", "application/xml")],
                                body: propfind, credentials: credentials))
                            if list.status != 207 { failures.append("PROPFIND \(d): \(list.status)") }
                        } catch {
                            failures.append("\(d): \(error)")
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        XCTAssertEqual(failures, [])
        let last = try Data(contentsOf: server.documentRoot.appendingPathComponent("w3-14/f"))
        XCTAssertEqual(last.count, sizes[14 % sizes.count])
    }

    /// WsgiDAV sends a body with its 401 to a HEAD; the probe's connection must not be reused,
    /// or the request after it reads that body as its reply.
    func testWsgiDAVFirstRequestWithABodyAfterTheProbe() async throws {
        let (server, base, credentials) = try startedWsgiDAV()
        defer { server.remove() }
        for i in 0..<10 {
            let transport = CurlTransport()  // knows nothing yet: the PUT is probed first
            let put = try await transport.perform(CurlRequest(method: "PUT", url: base + "f\(i)", body: Data("\(i)".utf8),
                                                              credentials: credentials))
            XCTAssertEqual(put.status, 201, "PUT \(i)")
            let get = try await transport.perform(CurlRequest(url: base + "f\(i)", credentials: credentials))
            XCTAssertEqual(get.status, 200, "GET \(i)")
            XCTAssertEqual(String(decoding: get.body, as: UTF8.self), "\(i)")
        }
    }

    /// A WsgiDAV server started for one test, its files' URL and its user's credentials.
    private func startedWsgiDAV() throws -> (WsgiDAVServer, String, CurlCredentials) {
        guard WsgiDAVServer.python != nil else { throw XCTSkip(WsgiDAVServer.missing) }
        let server = try WsgiDAVServer()
        do { try server.start() } catch { server.remove(); throw error }
        return (server, "http://127.0.0.1:\(server.port)/files/",
                CurlCredentials(user: WsgiDAVServer.user, password: WsgiDAVServer.password))
    }
}
