import Foundation
import XCTest
import FavFSCore
@testable import Providers
import TestSupport

/// known_hosts as OpenSSH writes it: ssh-keyscan's default order (ssh-rsa first), hashed names,
/// [host]:port, patterns. The live cases connect to a real sshd that has RSA, ECDSA and ed25519
/// host keys, as a stock Debian server does.
final class KnownHostsTests: XCTestCase {
    func testSHA1AndHMACMatchTheirReferenceVectors() {
        func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
        XCTAssertEqual(hex(HMACSHA1.sha1(Array("abc".utf8))), "a9993e364706816aba3e25717850c26c9cd0d89d")
        XCTAssertEqual(hex(HMACSHA1.sha1([])), "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        // RFC 2202, test case 2.
        XCTAssertEqual(hex(HMACSHA1.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))),
                       "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
    }

    func testEntriesAreMatchedLikeOpenSSHDoes() {
        let text = """
        # a comment
        example.org,192.0.2.1 ssh-rsa AAAArsa
        [example.org]:2222 ssh-ed25519 AAAAed2222
        *.example.org,!bad.example.org ecdsa-sha2-nistp256 AAAAwild
        @cert-authority *.example.org ssh-ed25519 AAAAca
        example.org ssh-ed25519 AAAAed
        other.net ssh-ed25519 AAAAother
        """
        XCTAssertEqual(KnownHosts(text: text, host: "example.org", port: 22).entries.map(\.key), ["AAAArsa", "AAAAed"])
        XCTAssertEqual(KnownHosts(text: text, host: "EXAMPLE.org", port: 22).entries.map(\.key), ["AAAArsa", "AAAAed"])
        XCTAssertEqual(KnownHosts(text: text, host: "example.org", port: 2222).entries.map(\.key), ["AAAAed2222"])
        XCTAssertEqual(KnownHosts(text: text, host: "www.example.org", port: 22).entries.map(\.key), ["AAAAwild"])
        XCTAssertEqual(KnownHosts(text: text, host: "bad.example.org", port: 22).entries.map(\.key), [])
        XCTAssertEqual(KnownHosts(text: text, host: "nowhere", port: 22).entries, [])
        // The strongest types first, under the plain name libcurl looks for.
        XCTAssertEqual(KnownHosts(text: text, host: "example.org", port: 22).rendered(host: "example.org", port: 22),
                       "example.org ssh-ed25519 AAAAed\nexample.org ssh-rsa AAAArsa\n")
        XCTAssertTrue(KnownHosts(text: "h ssh-rsa A\nh ssh-rsa B\n", host: "h", port: 22).onlyRSA)
        XCTAssertFalse(KnownHosts(text: "h ssh-rsa A\nh ssh-ed25519 B\n", host: "h", port: 22).onlyRSA)
    }

    func testHashedNamesWrittenBySSHKeygenMatch() throws {
        let dir = NSTemporaryDirectory() + "favfs-kh-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/known_hosts"
        try "[127.0.0.1]:2222 ssh-ed25519 AAAAport\nnas.local ssh-ed25519 AAAAnas\n".write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try Shell.run("/usr/bin/ssh-keygen", ["-H", "-f", file]).status, 0)
        let hashed = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertFalse(hashed.contains("nas.local"), hashed)
        XCTAssertEqual(KnownHosts(text: hashed, host: "127.0.0.1", port: 2222).entries.map(\.key), ["AAAAport"])
        XCTAssertEqual(KnownHosts(text: hashed, host: "nas.local", port: 22).entries.map(\.key), ["AAAAnas"])
        XCTAssertEqual(KnownHosts(text: hashed, host: "127.0.0.1", port: 22).entries, [])
    }

    // MARK: a real sshd with RSA, ECDSA and ed25519 host keys

    nonisolated(unsafe) private static var server: SSHServer?

    private func stockServer() throws -> SSHServer {
        if let s = Self.server { return s }
        let s = try ServerRequirement.sshd(extraHostKeyTypes: ["rsa", "ecdsa"])
        try s.start()
        Self.server = s
        return s
    }

    override class func tearDown() {
        server?.remove()
        server = nil
    }

    func testKnownHostsFromSSHKeyscanWithSSHRSAFirstConnects() async throws {
        let s = try stockServer()
        for hashed in [false, true] {
            // ssh-keyscan prints keys as they arrive, ssh-rsa first most of the time: make it always.
            let knownHosts = try s.keyscan(hashed: hashed)
            let lines = try String(contentsOfFile: knownHosts, encoding: .utf8).split(separator: "\n")
            let rsaFirst = lines.filter { $0.contains(" ssh-rsa ") } + lines.filter { !$0.contains(" ssh-rsa ") }
            XCTAssertEqual(rsaFirst.count, 3, "\(lines)")
            try rsaFirst.joined(separator: "\n").write(toFile: knownHosts, atomically: true, encoding: .utf8)
            let p = try SFTPTestServer.provider(s, options: ["known_hosts": knownHosts])
            _ = try await p.enumerateItems(in: .rootContainer, page: nil)
        }
    }

    func testAKeyOfTheRightTypeButWrongValueIsStillAChangedKey() async throws {
        let s = try stockServer()
        // The server's RSA and ECDSA keys, and somebody else's ed25519 key for the same name.
        let scanned = try String(contentsOfFile: try s.keyscan(), encoding: .utf8)
        let other = try String(contentsOfFile: s.root.path + "/other_host_ed25519.pub", encoding: .utf8).split(separator: " ")
        let lines = scanned.split(separator: "\n").filter { !$0.contains("ssh-ed25519") }
            + ["[127.0.0.1]:\(s.port) \(other[0]) \(other[1])"]
        let file = s.root.path + "/known_hosts_mixed"
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let p = try SFTPTestServer.provider(s, options: ["known_hosts": file])
        let error = await SFTPTestServer.expectError(.denied) { _ = try await p.item(for: .rootContainer) }
        XCTAssertTrue(error?.detail.contains("has CHANGED") == true, error?.detail ?? "")
    }
}
