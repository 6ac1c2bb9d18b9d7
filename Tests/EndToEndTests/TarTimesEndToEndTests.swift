import Foundation
import Testing
import TestSupport

/// `tar x` of many files into a mount, then the same tree from a new cache dir (another
/// computer): every file shows the time tar set, on remotes that keep times. tar sets each
/// folder's time after its files, while their uploads still run; on WebDAV a folder's version
/// moves with every upload into it, and a time that could not be bound to one once made favfs
/// conclude that the server keeps no times at all — every later file of the mount lost its
/// time at the next mount (`rsync -a` then sent everything again).
@Suite(.serialized)
struct TarTimesEndToEndTests {
    struct Target: Sendable, CustomStringConvertible {
        let server: any ConformanceServer
        var description: String { server.name }
    }
    static let targets = ConformanceServers.all
        .filter { $0.traits.writable && $0.traits.keepsModified && ["webdav", "local"].contains($0.name) }
        .map(Target.init)

    @Test("tar x keeps every file's time at the server", arguments: targets)
    func tarTimes(_ t: Target) throws {
        try E2EGate.requireFUSE()
        let work = "/tmp/favfs-tar-times-\(UUID().uuidString.prefix(6))"
        defer { try? FileManager.default.removeItem(atPath: work) }
        var rng = SeededRandom(seed: 11)
        var times: [String: Int] = [:]
        for i in 0..<300 {
            let rel = "src/m\(i % 5)/s\(i % 3)/f\(i).c"
            try FileManager.default.createDirectory(atPath: "\(work)/\((rel as NSString).deletingLastPathComponent)",
                                                    withIntermediateDirectories: true)
            let size = 100 + Int(rng.next() % 20_000)
            try Data((0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) }).write(to: URL(fileURLWithPath: "\(work)/\(rel)"))
            let seconds = 1_600_000_000 + i * 3_607
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: Double(seconds))],
                                                  ofItemAtPath: "\(work)/\(rel)")
            times[String(rel.dropFirst(4))] = seconds
        }
        let tarred = try Shell.run("/usr/bin/tar", ["-cf", "\(work)/tree.tar", "-C", "\(work)/src", "."])
        guard tarred.status == 0 else { throw ShellError("tar c: \(tarred.error)") }

        try t.server.start()
        let root = "tar-\(UUID().uuidString.prefix(6).lowercased())"
        try t.server.seed(files: [:], folders: [root])
        let remote = t.server.remote()
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        try m.mountOrThrow(password: remote.secret)
        let x = try Shell.run("/usr/bin/tar", ["-xf", "\(work)/tree.tar", "-C", m.path + "/" + root])
        #expect(x.status == 0, "\(t.server.name): tar x failed: \(x.error)")
        #expect(try m.unmount().succeeded, "\(t.server.name): the uploads drain at unmount")
        let log = (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
        #expect(!log.contains("does not keep modification times"), "\(t.server.name): the log says the server keeps no times")

        let other = try MountedFavFS(remote: remote.urlWithOptions)
        defer { other.tearDown() }
        try other.mountOrThrow(password: remote.secret)
        var lost: [String] = []
        for (rel, seconds) in times.sorted(by: { $0.key < $1.key }) {
            let attributes = try FileManager.default.attributesOfItem(atPath: other.path + "/" + root + "/" + rel)
            let shown = (attributes[.modificationDate] as? Date).map { Int($0.timeIntervalSince1970) }
            if shown != seconds { lost.append("\(rel): \(shown.map(String.init) ?? "none") for \(seconds)") }
        }
        #expect(lost.isEmpty, "\(t.server.name): \(lost.count) of \(times.count) files lost the time tar set: \(lost.prefix(3)) — \(m.logProblems())")
        #expect(try other.unmount().succeeded)
    }
}
