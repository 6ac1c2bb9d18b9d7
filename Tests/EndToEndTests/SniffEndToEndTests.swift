import Foundation
import TestSupport
import XCTest

/// A file manager finding MIME types reads the first bytes of every file in a folder (GIO
/// sniffs 4 KiB). On a WebDAV mount of 20 files of 16 MiB, reading the first 4 KiB of each may
/// cost at most 20 MiB from the server (counted in Apache's access log), where a 4 MiB first
/// read-ahead cost over 80. (`file(1)` is no sniffer: it reads 7 MiB from each end.)
final class SniffEndToEndTests: XCTestCase {
    func testSniffingTwentyBigFilesCostsLittle() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        let size = 16 << 20
        var pattern = [UInt8](repeating: 0, count: size)
        for j in 0..<size { pattern[j] = UInt8(truncatingIfNeeded: (j &* 31) >> 5) }
        var data = Data(pattern)
        data.replaceSubrange(0..<8, with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])   // looks like a PNG
        for i in 0..<20 {
            data[size - 1] = UInt8(i)
            try data.write(to: apache.documentRoot.appendingPathComponent(String(format: "video%02d.bin", i)))
        }
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--poll-interval", "0"])
        let before = apache.accessLogLines().count

        let sniff = try TimedProcess.sh("cd \(shq(m.path)) && for f in video*.bin; do head -c 4096 \"$f\" | head -c 8 | od -An -tx1; done", timeout: 300)
        XCTAssertTrue(sniff.succeeded, "\(sniff)")
        XCTAssertEqual(sniff.stdout.split(separator: "\n").filter { $0.contains("89 50 4e 47") }.count, 20, sniff.stdout)
        // Let read-ahead started by the sniffing finish before counting.
        sleep(2)
        let gets = apache.accessLogLines().dropFirst(before).filter { $0.hasPrefix("GET ") }
        let bytes = gets.compactMap { line in line.split(separator: " ").dropFirst(3).first.flatMap { Int64($0) } }.reduce(0, +)
        print("sniffing 20 files of 16 MiB: \(gets.count) GETs, \(bytes) bytes from the server")
        XCTAssertLessThanOrEqual(bytes, 20 << 20, "sniffing cost \(bytes) bytes")
        XCTAssertTrue(try m.unmount().succeeded)
    }
}
