import Foundation
import TestSupport
import XCTest

/// Two computers editing one file: two mounts of one Apache mod_dav server, each round both
/// rewrite the same file at about the same moment (seeded delays, so some rounds race inside
/// Apache's one-second weak-ETag window and some do not). Neither edit may be lost silently:
/// afterwards the server holds both, one under the name and the other as a conflict copy.
final class TwoWritersEndToEndTests: XCTestCase {
    func testNeitherOfTwoConcurrentEditsIsLost() throws {
        try E2EGate.require(apache: true)
        let rounds = Int(ProcessInfo.processInfo.environment["FAVFS_TWO_WRITER_ROUNDS"] ?? "") ?? 20
        let seed = UInt64(ProcessInfo.processInfo.environment["FAVFS_TWO_WRITER_SEED"] ?? "") ?? 7
        var rng = SeededRandom(seed: seed)
        let apache = try ApacheServer()
        try apache.start()
        defer { apache.remove() }
        // Folders neither mount has listed yet, so B looks each round's file up fresh.
        for round in 0..<rounds {
            try FileManager.default.createDirectory(at: apache.documentRoot.appendingPathComponent("r\(round)"), withIntermediateDirectories: true)
        }
        try apache.fixOwnership()
        let a = try MountedFavFS(remote: apache.davURL), b = try MountedFavFS(remote: apache.davURL)
        defer { a.tearDown(); b.tearDown() }
        // `--fsync remote`: A's fsync of the base returns once the server has it, so B finds it.
        try a.mountOrThrow(extraArgs: ["--fsync", "remote"])
        try b.mountOrThrow(extraArgs: ["--fsync", "remote"])

        var steps: [String] = []
        for round in 0..<rounds {
            // A creates the file (so its ETag is a fresh, weak one), B reads it.
            let created = Self.rewrite(a.path + "/r\(round)/shared.txt", with: "base \(round)\n", create: true)
            XCTAssertNil(created, "round \(round): creating the base: \(created ?? "")")
            let waitBefore = Double(rng.next() % 1500) / 1000
            steps.append("round \(round): base written by A, read by B, then wait \(String(format: "%.2f", waitBefore)) s")
            for m in [a, b] {
                XCTAssertEqual(try String(contentsOfFile: m.path + "/r\(round)/shared.txt", encoding: .utf8), "base \(round)\n")
            }
            usleep(UInt32(waitBefore * 1e6))
            let skew = UInt32(rng.next() % 4_000)
            steps.append("round \(round): A and B write (B \(skew) µs later)")
            let results = ResultBox()
            let group = DispatchGroup()
            for (name, m, delay) in [("A", a, UInt32(0)), ("B", b, skew)] {
                group.enter()
                Thread {
                    usleep(delay)
                    results.set(name, Self.rewrite(m.path + "/r\(round)/shared.txt", with: "\(name) \(round)\n"))
                    group.leave()
                }.start()
            }
            XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "round \(round): the writers hang")
            for (name, error) in results.all() where error != nil {
                XCTFail("round \(round): writer \(name): \(error!)\n" + steps.suffix(6).joined(separator: "\n"))
            }
        }
        // Unmount drains every upload (and every conflict copy) of both.
        XCTAssertTrue(try a.unmount().succeeded)
        XCTAssertTrue(try b.unmount().succeeded)

        var conflicts = 0
        for round in 0..<rounds {
            let folder = apache.documentRoot.appendingPathComponent("r\(round)")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            let contents = Set(names.compactMap { try? String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) })
            conflicts += names.filter { $0.contains("(conflict ") }.count
            for writer in ["A", "B"] where !contents.contains("\(writer) \(round)\n") {
                XCTFail("seed \(seed) round \(round): \(writer)'s edit is lost; the server has \(names.sorted()) = \(contents.sorted())\n"
                        + steps.filter { $0.hasPrefix("round \(round):") }.joined(separator: "\n"))
            }
        }
        print("two writers: \(rounds) rounds (seed \(seed)), \(conflicts) conflict copies, no edit lost unless failed above")
    }

    /// open(O_WRONLY|O_TRUNC), write, fsync, close: an editor saving in place. Nil on success.
    static func rewrite(_ path: String, with text: String, create: Bool = false) -> String? {
        // O_CLOEXEC: other tests run in parallel and spawn processes, which must not inherit it.
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | (create ? O_CREAT : 0), 0o644)
        guard fd >= 0 else { return "open: \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            return "write: \(String(cString: strerror(errno)))"
        }
        guard fsync(fd) == 0 else { return "fsync: \(String(cString: strerror(errno)))" }
        return nil
    }
}

/// Each writer's outcome, set from its thread.
private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: String?] = [:]
    func set(_ name: String, _ error: String?) { lock.lock(); values[name] = .some(error); lock.unlock() }
    func all() -> [(String, String?)] { lock.lock(); defer { lock.unlock() }; return values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
}
