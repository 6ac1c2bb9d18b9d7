import Foundation
import TestSupport
import XCTest

/// A big new file is uploaded while a program writes it (a chunked PUT fed from the cache
/// file), on the release binary against Apache mod_dav. Whatever the program does besides
/// appending — writing back over what was sent, fsync, being killed — the server ends with
/// exactly what was written, and no stray copy.
final class StreamingUploadEndToEndTests: XCTestCase {
    private var apache: ApacheServer!
    private var mount: MountedFavFS!
    private var cache: URL!

    override func setUpWithError() throws {
        try E2EGate.require(apache: true)
        apache = try ApacheServer()
        try apache.start()
        cache = URL(fileURLWithPath: "/tmp/favfs-stream-\(UUID().uuidString.prefix(8))")
        mount = try MountedFavFS(remote: apache.davURL, cacheDir: cache)
        try mount.mountOrThrow(extraArgs: ["--fsync", "remote"])
    }

    override func tearDown() {
        mount?.tearDown()
        apache?.remove()
        if let cache { try? FileManager.default.removeItem(at: cache) }
    }

    /// Bytes that differ per offset and per `seed`, so misplaced or stale bytes show.
    static func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 4093 &+ Int(seed)) }
    }

    /// Writes all of `bytes` at `offset`, 1 MiB per call, as `cp` does.
    static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int) {
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { pwrite(fd, $0.baseAddress, min($0.count, 1 << 20), off_t(offset + done)) }
            guard n > 0 else { return XCTFail("write: \(String(cString: strerror(errno)))") }
            done += n
        }
    }

    private func served(_ name: String) -> Data? { try? Data(contentsOf: apache.documentRoot.appendingPathComponent(name)) }

    /// The temp file Apache mod_dav_fs writes a PUT body into before renaming it into place.
    private func bytesArrivingAtTheServer() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: apache.documentRoot.path)) ?? []
        return names.filter { $0.hasPrefix(".davfs.tmp") }.compactMap {
            (try? FileManager.default.attributesOfItem(atPath: apache.documentRoot.appendingPathComponent($0).path))?[.size] as? Int
        }.max() ?? 0
    }

    private func puts(of name: String) -> Int {
        apache.accessLogLines().filter { $0.hasPrefix("PUT /files/\(name) ") }.count
    }

    private func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: apache.documentRoot.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    func testABigNewFileReachesTheServerWhileItIsWritten() throws {
        let first = Self.pattern(12 << 20), second = Self.pattern(12 << 20, seed: 7)
        let fd = open(mount.path + "/big.bin", O_CREAT | O_WRONLY | O_EXCL, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        Self.write(fd, first, at: 0)
        // Still open: the bytes are on their way already (Apache's temp file grows).
        XCTAssertTrue(waitUntil(30) { self.bytesArrivingAtTheServer() >= 8 << 20 },
                      "nothing arrived at the server while the file was written (\(bytesArrivingAtTheServer()) bytes)")
        XCTAssertNil(served("big.bin"), "the name must appear only with the whole content")
        Self.write(fd, second, at: first.count)
        XCTAssertEqual(close(fd), 0)
        XCTAssertTrue(waitUntil(60) { self.served("big.bin")?.count == first.count + second.count })
        XCTAssertEqual(served("big.bin"), Data(first + second))
        XCTAssertEqual(puts(of: "big.bin"), 1, "one PUT for the whole file")
        XCTAssertTrue(try mount.unmount().succeeded)
        XCTAssertEqual(names(), ["big.bin"])
    }

    func testAWriteBackOverWhatWasSentUploadsTheWholeFileAgain() throws {
        var model = Self.pattern(10 << 20)
        let fd = open(mount.path + "/edited.bin", O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        Self.write(fd, model, at: 0)
        XCTAssertTrue(waitUntil(30) { self.bytesArrivingAtTheServer() > 0 }, "the stream did not start")
        // A header rewritten at the end, as some archivers and encoders do.
        let header = [UInt8](repeating: 0xEE, count: 4096)
        Self.write(fd, header, at: 100)
        model.replaceSubrange(100..<(100 + header.count), with: header)
        let tail = Self.pattern(3 << 20, seed: 3)
        Self.write(fd, tail, at: model.count)
        model += tail
        XCTAssertEqual(close(fd), 0)
        XCTAssertTrue(try mount.unmount().succeeded)  // waits for the upload
        XCTAssertEqual(served("edited.bin"), Data(model), "the server must have what was written, the rewrite included")
        XCTAssertEqual(names(), ["edited.bin"], "no conflict copy: the given-up stream stored nothing")
    }

    func testFsyncDuringAStreamReturnsWithTheBytesOnTheServer() throws {
        let first = Self.pattern(8 << 20), second = Self.pattern(2 << 20, seed: 9)
        let fd = open(mount.path + "/synced.bin", O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        Self.write(fd, first, at: 0)
        let started = Date()
        XCTAssertEqual(fsync(fd), 0, String(cString: strerror(errno)))
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "fsync waited for the writer's close")
        XCTAssertEqual(served("synced.bin"), Data(first), "fsync returned before the bytes were on the server")
        Self.write(fd, second, at: first.count)
        XCTAssertEqual(close(fd), 0)
        XCTAssertTrue(try mount.unmount().succeeded)
        XCTAssertEqual(served("synced.bin"), Data(first + second))
        XCTAssertEqual(names(), ["synced.bin"])
    }

    func testAKillDuringAStreamLosesNothingWritten() throws {
        let written = Self.pattern(9 << 20, seed: 5)
        let fd = open(mount.path + "/killed.bin", O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        Self.write(fd, written, at: 0)
        XCTAssertTrue(waitUntil(30) { self.bytesArrivingAtTheServer() > 0 }, "the stream did not start")
        guard let pid = MountedFavFS.processes(mentioning: mount.path).first else { return XCTFail("no daemon") }
        kill(pid, SIGKILL)
        close(fd)
        mount.tearDown()
        XCTAssertNil(served("killed.bin"), "a cut stream must not leave a partial file under the name")
        let again = try MountedFavFS(remote: apache.davURL, cacheDir: cache)
        mount = again
        try again.mountOrThrow(extraArgs: ["--fsync", "remote"])
        XCTAssertTrue(try again.unmount().succeeded)  // the journal's upload, resumed
        XCTAssertEqual(served("killed.bin"), Data(written))
        XCTAssertEqual(names(), ["killed.bin"])
    }
}
