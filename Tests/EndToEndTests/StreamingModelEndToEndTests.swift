import Foundation
import TestSupport
import XCTest

/// Streamed uploads against a model: new files grow mostly by appends (so their upload streams
/// while they are written), mixed with what breaks a stream — a write back over sent bytes, a
/// truncate, an fsync — in seeded order; half the files only append and read, so their stream
/// runs to the close. Every call's result is compared with the same
/// call on a plain local file, and after unmount the server must hold exactly the model's bytes,
/// with no stray file. A failure prints the seed and the last steps;
/// `FAVFS_STREAM_SEED=N` replays one seed.
final class StreamingModelEndToEndTests: XCTestCase {
    private var seeds: [UInt64] {
        if let s = ProcessInfo.processInfo.environment["FAVFS_STREAM_SEED"].flatMap({ UInt64($0) }) { return [s] }
        return [31, 32, 33]
    }

    func testAppendHeavyWritesEndOnTheServerAsOnALocalDisk() throws {
        try E2EGate.require(apache: true)
        let apache = try ApacheServer()
        try apache.start()
        defer { apache.remove() }
        let mount = try MountedFavFS(remote: apache.davURL)
        defer { mount.tearDown() }
        try mount.mountOrThrow()
        let modelRoot = mount.base.appendingPathComponent("model")
        try FileManager.default.createDirectory(at: modelRoot, withIntermediateDirectories: true)

        var names: [String] = []
        for seed in seeds {
            var rng = SeededRandom(seed: seed)
            for k in 0..<4 {
                let name = "s\(seed)-\(k).bin"
                names.append(name)
                // Even files only append and read (the stream runs to the close); odd ones meet everything.
                try run(name, mount: mount.path, model: modelRoot.path, seed: seed, appendsOnly: k % 2 == 0, &rng)
            }
        }
        XCTAssertTrue(try mount.unmount().succeeded)  // waits for every upload
        let onServer = try FileManager.default.contentsOfDirectory(atPath: apache.documentRoot.path).filter { !$0.hasPrefix(".") }
        XCTAssertEqual(onServer.sorted(), names.sorted(), "a stray or missing file at the server")
        for name in names {
            let server = try Data(contentsOf: apache.documentRoot.appendingPathComponent(name))
            let model = try Data(contentsOf: modelRoot.appendingPathComponent(name))
            XCTAssertEqual(server.count, model.count, "\(name): size at the server")
            XCTAssertTrue(server == model, "\(name): the server's bytes differ from the model's (first at \(zip(server, model).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1))")
        }
    }

    private func run(_ name: String, mount: String, model: String, seed: UInt64, appendsOnly: Bool,
                     _ rng: inout SeededRandom) throws {
        let m = open(mount + "/" + name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o644)
        let r = open(model + "/" + name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(m, 0, String(cString: strerror(errno)))
        XCTAssertGreaterThanOrEqual(r, 0)
        defer { close(m); close(r) }
        var steps: [String] = []
        func fail(_ what: String) {
            XCTFail("seed \(seed) \(name): \(what)\nlast steps:\n" + steps.suffix(12).joined(separator: "\n"))
        }
        // Appends first, past the streaming threshold (4 MiB), so the upload is running when the
        // mixed steps come: the first of them that breaks the stream meets it under way.
        let lead = (4 << 20) + Int(rng.next() % (2 << 20))
        for step in 0..<60 {
            var st = stat()
            fstat(r, &st)
            let size = Int(st.st_size)
            var roll = size < lead ? 0 : Int(rng.next() % 100)
            if appendsOnly && (72..<90).contains(roll) { roll = 0 }
            switch roll {
            case 0..<72:  // append, the common case: the stream follows
                let bytes = Self.bytes(Int(rng.next() % (768 << 10)) + (32 << 10), &rng)
                let a = bytes.withUnsafeBytes { pwrite(m, $0.baseAddress, $0.count, off_t(size)) }
                let b = bytes.withUnsafeBytes { pwrite(r, $0.baseAddress, $0.count, off_t(size)) }
                steps.append("\(step): append \(bytes.count) at \(size) -> \(a)")
                if a != b { return fail("append: mount \(a) model \(b) (\(String(cString: strerror(errno))))") }
            case 72..<80:  // back over what may have been sent
                guard size > 0 else { continue }
                let offset = Int(rng.next() % UInt64(size))
                let bytes = Self.bytes(Int(rng.next() % 20_000) + 1, &rng)
                let a = bytes.withUnsafeBytes { pwrite(m, $0.baseAddress, $0.count, off_t(offset)) }
                let b = bytes.withUnsafeBytes { pwrite(r, $0.baseAddress, $0.count, off_t(offset)) }
                steps.append("\(step): rewrite \(bytes.count) at \(offset) -> \(a)")
                if a != b { return fail("rewrite: mount \(a) model \(b)") }
            case 80..<85:
                let target = size == 0 ? 0 : Int(rng.next() % UInt64(size))
                let a = ftruncate(m, off_t(target)), b = ftruncate(r, off_t(target))
                steps.append("\(step): ftruncate to \(target) -> \(a)")
                if a != b { return fail("ftruncate: mount \(a) model \(b)") }
            case 85..<90:
                let started = Date()
                let a = fsync(m)
                steps.append("\(step): fsync -> \(a) in \(String(format: "%.2f", Date().timeIntervalSince(started))) s")
                if a != 0 { return fail("fsync: \(String(cString: strerror(errno)))") }
            default:
                guard size > 0 else { continue }
                let offset = Int(rng.next() % UInt64(size)), length = Int(rng.next() % 300_000) + 1
                var x = [UInt8](repeating: 0, count: length), y = [UInt8](repeating: 0, count: length)
                let a = x.withUnsafeMutableBytes { pread(m, $0.baseAddress, length, off_t(offset)) }
                let b = y.withUnsafeMutableBytes { pread(r, $0.baseAddress, length, off_t(offset)) }
                steps.append("\(step): pread \(length) at \(offset) -> \(a)")
                if a != b || x != y { return fail("pread: mount \(a) model \(b)\(x != y ? ", bytes differ" : "")") }
            }
        }
    }

    private static func bytes(_ count: Int, _ rng: inout SeededRandom) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var v = rng.next()
        for i in 0..<count {
            if i % 8 == 0 { v = rng.next() }
            out[i] = UInt8(truncatingIfNeeded: v >> ((i % 8) * 8))
        }
        return out
    }
}
