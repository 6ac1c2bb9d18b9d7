import Foundation
import TestSupport
import XCTest

/// `favfs status --json` and `--watch` show uploads and downloads while they run: a WebDAV
/// server behind a proxy that trickles both ways at 512 KiB/s per connection, so a 12 MiB upload
/// and a 48 MiB download (read-ahead fetches it over several connections) take seconds, and their bytes are seen growing, never past the total, under the
/// right paths.
final class TransferProgressEndToEndTests: XCTestCase {
    struct Sample { let path: String; let direction: String; let done: Int64; let total: Int64; let rate: Int64 }

    func testStatusShowsRunningTransfers() throws {
        try E2EGate.require(apache: true)
        guard let python = FavartServer.python else { throw XCTSkip("python3 is needed for the trickling proxy") }
        let apache = try ApacheServer()
        let downloadSize = 48 << 20, uploadSize = 12 << 20
        try Data(repeating: 5, count: downloadSize).write(to: apache.documentRoot.appendingPathComponent("down.bin"))
        try apache.start()
        defer { apache.remove() }
        let port = try FreePort.next()
        let script = URL(fileURLWithPath: FavartServer.script).deletingLastPathComponent().appendingPathComponent("trickle_proxy.py").path
        let proxy = try BackgroundProcess(python, [script, "\(port)", "\(apache.port)", "\(512 << 10)", "uploads"],
                                          logFile: URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-trickle-\(port).log"))
        defer { proxy.stop() }
        guard FreePort.waitUntilListening(port: port, timeout: 10) else { throw ShellError("the proxy did not start: \(proxy.log())") }
        let m = try MountedFavFS(remote: "dav://127.0.0.1:\(port)/files/")
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--timeout", "120"])
        XCTAssertEqual(try TimedProcess.sh("ls \(shq(m.path))", timeout: 60).status, 0)

        // The upload starts at the close; the download runs in the background.
        let write = try TimedProcess.sh("head -c \(uploadSize) /dev/urandom > \(shq(m.path))/up.bin", timeout: 120)
        XCTAssertTrue(write.succeeded, "\(write)")
        let reader = try BackgroundProcess("/bin/sh", ["-c", "cat \(shq(m.path))/down.bin > /dev/null; echo read $?"],
                                           logFile: m.base.appendingPathComponent("reader.log"))
        defer { reader.stop() }

        // --watch without a terminal (a log file): one block per interval, while the transfers run.
        let watcher = try BackgroundProcess("/bin/sh", ["-c", "exec timeout -s INT 3.5 \(shq(FavFSBinary.path)) status --watch --interval 1 \(shq(m.path))"],
                                            logFile: m.base.appendingPathComponent("watch.log"))
        defer { watcher.stop() }

        var samples: [Sample] = []
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline {
            // Other mounts on this machine may be transferring too: only this mount's.
            samples += try Self.transfers().filter { $0.path.hasPrefix(m.path + "/") }
            let up = samples.filter { $0.direction == "upload" }, down = samples.filter { $0.direction == "download" }
            if Set(up.map(\.done)).count >= 3 && Set(down.map(\.done)).count >= 3 { break }
            usleep(400_000)
        }
        for (direction, path, total) in [("upload", m.path + "/up.bin", Int64(uploadSize)), ("download", m.path + "/down.bin", Int64(downloadSize))] {
            let seen = samples.filter { $0.direction == direction }
            XCTAssertFalse(seen.isEmpty, "no \(direction) in status --json: \(samples)")
            XCTAssertTrue(seen.allSatisfy { $0.path == path }, "\(direction) paths: \(seen.map(\.path))")
            XCTAssertTrue(seen.allSatisfy { $0.total == total && $0.done >= 0 && $0.done <= $0.total }, "\(direction): \(seen)")
            let dones = seen.map(\.done)
            XCTAssertGreaterThanOrEqual(Set(dones).count, 3, "\(direction): bytes done did not grow: \(dones)")
            XCTAssertEqual(dones, dones.sorted(), "\(direction): bytes done went back: \(dones)")
            XCTAssertTrue(seen.contains { $0.rate > 0 }, "\(direction): no rate: \(seen)")
            print("\(direction) progress seen: \(dones.map { "\($0 >> 10) KiB" }.joined(separator: ", ")) of \(total >> 10) KiB; rates \(Set(seen.map { $0.rate >> 10 }).sorted()) KiB/s")
        }

        XCTAssertTrue(waitUntil(30) { !watcher.isRunning }, "status --watch did not end")
        let watch = watcher.log()
        let blocks = watch.components(separatedBy: "favfs status at ").count - 1
        XCTAssertGreaterThanOrEqual(blocks, 2, "status --watch printed \(blocks) blocks: \(watch)")
        XCTAssertTrue(watch.contains("upload  " + m.path + "/up.bin") && watch.contains("download  " + m.path + "/down.bin"), "status --watch: \(watch)")
        XCTAssertFalse(watch.contains("\u{1B}["), "no terminal, no ANSI codes: \(watch)")
        print("status --watch (3.5 s, no terminal):\n\(watch.suffix(800))")

        // Plain `favfs status` has the lines too, while they run.
        let text = try TimedProcess.run(FavFSBinary.path, ["status"], timeout: 30)
        XCTAssertTrue(text.succeeded, "\(text)")

        // Done: nothing left in transfers, the upload is at the server.
        XCTAssertTrue(waitUntil(180) { reader.log().contains("read 0") }, "the reader: \(reader.log())")
        let u = try m.unmount(timeout: 300)
        XCTAssertTrue(u.succeeded, "unmount: \(u)")
        XCTAssertEqual((try? Data(contentsOf: apache.documentRoot.appendingPathComponent("up.bin")))?.count, uploadSize)
    }

    /// The transfers of every mount, from `favfs status --json`.
    static func transfers() throws -> [Sample] {
        let r = try TimedProcess.run(FavFSBinary.path, ["status", "--json"], timeout: 30)
        guard r.succeeded, let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
              let mounts = json["mounts"] as? [[String: Any]] else { throw ShellError("status --json: \(r)") }
        return mounts.flatMap { mount in
            ((mount["transfers"] as? [[String: Any]]) ?? []).map { t in
                Sample(path: t["path"] as? String ?? "", direction: t["direction"] as? String ?? "",
                       done: (t["bytes_done"] as? NSNumber)?.int64Value ?? -1, total: (t["bytes_total"] as? NSNumber)?.int64Value ?? -1,
                       rate: (t["rate_bytes_per_second"] as? NSNumber)?.int64Value ?? -1)
            }
        }
    }

    private func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(200_000)
        }
        return condition()
    }
}
