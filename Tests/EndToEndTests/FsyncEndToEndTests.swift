import Foundation
import TestSupport
import XCTest

/// fsync against Apache mod_dav while another thread keeps writing the same file: fsync returns
/// once what was written before it is on the server, not when the file stops changing (which,
/// for a file written all the time, was never).
final class FsyncEndToEndTests: XCTestCase {
    func testFsyncReturnsWhileAnotherThreadKeepsWriting() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow()

        let path = m.path + "/busy.bin"
        let fd = open(path, O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let chunk = [UInt8](repeating: 0x5A, count: 64 << 10)
        let stop = ManagedAtomicFlag()
        // The writer stops by itself after 20 s, so a fsync that waits for it fails, not hangs.
        let writer = Thread {
            var offset: off_t = 0
            let end = Date().addingTimeInterval(21)
            while !stop.isSet && Date() < end {
                let n = chunk.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, offset) }
                if n > 0 { offset += off_t(n) }
                usleep(5_000)
            }
        }
        writer.start()
        defer { stop.set() }
        usleep(1_000_000)
        var st = stat()
        XCTAssertEqual(fstat(fd, &st), 0)
        let before = Int(st.st_size)
        let started = Date()
        XCTAssertEqual(fsync(fd), 0, String(cString: strerror(errno)))
        let took = Date().timeIntervalSince(started)
        // The writer goes on for about 20 s more; fsync must not wait for it (generous margin).
        XCTAssertLessThan(took, 10, "fsync waited for later writes")
        let onServer = (try? Data(contentsOf: apache.documentRoot.appendingPathComponent("busy.bin")))?.count ?? 0
        XCTAssertGreaterThanOrEqual(onServer, before, "fsync returned before the bytes written before it were on the server")
        print("fsync with a busy writer: \(String(format: "%.2f", took)) s; \(before) bytes before it, \(onServer) on the server after")
        usleep(3_000_000)
        stop.set()
        while !writer.isFinished { usleep(10_000) }
        XCTAssertEqual(fstat(fd, &st), 0)
        let final = Int(st.st_size)
        close(fd)
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual((try? Data(contentsOf: apache.documentRoot.appendingPathComponent("busy.bin")))?.count, final)
    }
}

/// A flag set once, read from another thread.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
