import Foundation
import Testing
import TestSupport

/// Two computers editing one file, on every writable remote: two mounts of one server, each
/// round both rewrite the same file at about the same moment (seeded skew of 0–4 ms). Neither
/// edit may be lost silently: afterwards the server holds both, one under the name and the
/// other as a conflict copy. (WebDAV has its own, longer test: TwoWritersEndToEndTests.)
@Suite(.serialized)
struct TwoWritersPerRemoteEndToEndTests {
    struct Target: Sendable, CustomStringConvertible {
        let server: any ConformanceServer
        var description: String { server.name }
    }
    // Favart is left out: its API has no conditional write at all (README: the window is the
    // upload), and it stores only images.
    static let targets = ConformanceServers.all
        .filter { $0.traits.writable && $0.traits.detectsConflicts && $0.traits.conditionalWritesAreAtomic
                  && $0.name != "favart" && $0.name != "webdav" }
        .map(Target.init)

    @Test("two mounts rewriting one file never lose an edit silently", arguments: targets)
    func neitherEditIsLost(_ t: Target) throws {
        try E2EGate.requireFUSE()
        let rounds = Int(ProcessInfo.processInfo.environment["FAVFS_TWO_WRITER_ROUNDS"] ?? "") ?? 10
        let seed = UInt64(ProcessInfo.processInfo.environment["FAVFS_TWO_WRITER_SEED"] ?? "") ?? 11
        var rng = SeededRandom(seed: seed)
        let root = "two-writers-\(UUID().uuidString.prefix(6).lowercased())"
        let name = t.server.fileName("shared.txt")
        var files: [String: Data] = [:]
        for round in 0..<rounds { files["\(root)/r\(round)/\(name)"] = Data("base \(round)\n".utf8) }
        try t.server.start()
        try t.server.seed(files: files, folders: [])
        let remote = t.server.remote()
        let a = try MountedFavFS(remote: remote.urlWithOptions), b = try MountedFavFS(remote: remote.urlWithOptions)
        defer { a.tearDown(); b.tearDown() }
        try a.mountOrThrow(password: remote.secret)
        try b.mountOrThrow(password: remote.secret)

        var steps: [String] = []
        for round in 0..<rounds {
            let rel = "\(root)/r\(round)/\(name)"
            for m in [a, b] {
                #expect(Descriptors.contents(of: m.path + "/" + rel) == Data("base \(round)\n".utf8), "round \(round): base")
            }
            let skew = UInt32(rng.next() % 4_000)
            steps.append("round \(round): A and B rewrite \(rel) (B \(skew) µs later)")
            let errors = Errors()
            let group = DispatchGroup()
            for (writer, m, delay) in [("A", a, UInt32(0)), ("B", b, skew)] {
                group.enter()
                Thread {
                    usleep(delay)
                    if let e = TwoWritersEndToEndTests.rewrite(m.path + "/" + rel, with: "\(writer) \(round)\n") { errors.add("\(writer): \(e)") }
                    group.leave()
                }.start()
            }
            #expect(group.wait(timeout: .now() + 120) == .success, "round \(round): the writers hang")
            for e in errors.all() { Issue.record("\(t.server.name) round \(round): \(e)") }
        }
        #expect(try a.unmount().succeeded)
        #expect(try b.unmount().succeeded)

        // What the server holds now, seen through a third, fresh mount.
        let c = try MountedFavFS(remote: remote.urlWithOptions)
        defer { c.tearDown() }
        try c.mountOrThrow(password: remote.secret)
        var conflicts = 0
        for round in 0..<rounds {
            let folder = c.path + "/\(root)/r\(round)"
            let names: [String]
            do { names = try FileManager.default.contentsOfDirectory(atPath: folder) }
            catch { Issue.record("\(t.server.name) round \(round): cannot list \(folder): \(error)"); continue }
            let contents = Set(names.compactMap { Descriptors.contents(of: folder + "/" + $0).map { String(decoding: $0, as: UTF8.self) } })
            conflicts += names.filter { $0.contains("(conflict ") }.count
            for writer in ["A", "B"] where !contents.contains("\(writer) \(round)\n") {
                let story = steps.filter { $0.hasPrefix("round \(round):") }.joined(separator: "\n")
                Issue.record("\(t.server.name) seed \(seed) round \(round): \(writer)'s edit is lost; the server has \(names.sorted()) = \(contents.sorted())\n\(story)")
            }
        }
        print("two writers on \(t.server.name): \(rounds) rounds (seed \(seed)), \(conflicts) conflict copies")
        #expect(try c.unmount().succeeded)
    }
}

private final class Errors: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ e: String) { lock.lock(); list.append(e); lock.unlock() }
    func all() -> [String] { lock.lock(); defer { lock.unlock() }; return list }
}
