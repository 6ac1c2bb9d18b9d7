import Foundation
import Testing
import TestSupport

/// `rsync -a` into a mount, then again: the second run must send nothing, because the times
/// rsync set on the first run are still there. On every writable remote within one mount and
/// after a remount of the same cache dir (servers that keep no times: favfs keeps them there);
/// from a new cache dir (another computer) wherever the server keeps times
/// (`traits.keepsModified`) — where it does not, the daemon log said so.
@Suite(.serialized)
struct RsyncEndToEndTests {
    struct Target: Sendable, CustomStringConvertible {
        let server: any ConformanceServer
        var description: String { server.name }
    }
    // Favart stores only images.
    static let targets = ConformanceServers.all.filter { $0.traits.writable && $0.name != "favart" }.map(Target.init)

    /// A source tree: files of several sizes in nested folders, with past times (nanoseconds
    /// included) on files and folders.
    static func makeSource(at dir: String) throws {
        var rng = SeededRandom(seed: 5)
        for i in 0..<24 {
            let folder = "\(dir)/d\(i % 3)/e\(i % 2)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let size = Int(rng.next() % 40_000)
            let data = Data((0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            try data.write(to: URL(fileURLWithPath: "\(folder)/f\(i).bin"))
            let r = try Shell.run("/usr/bin/touch", ["-d", "2021-0\(1 + i % 9)-1\(i % 10) 10:\(10 + i):05.\(123_456_789 + i)", "\(folder)/f\(i).bin"])
            guard r.status == 0 else { throw ShellError("touch: \(r.error)") }
        }
        _ = try Shell.run("/usr/bin/touch", ["-d", "2020-05-06 07:08:09", "\(dir)/d0"])
    }

    /// The files an `rsync -ai` run sent (its `>f` lines).
    static func rsync(_ source: String, _ destination: String) throws -> [String] {
        let r = try Shell.run("/usr/bin/rsync", ["-ai", source + "/", destination + "/"])
        guard r.status == 0 else { throw ShellError("rsync -ai \(source)/ \(destination)/ failed (\(r.status)): \(r.error)") }
        return r.output.split(separator: "\n").map(String.init).filter { $0.hasPrefix(">f") }
    }

    @Test("rsync -a run twice sends nothing the second time", arguments: targets)
    func rsyncTwice(_ t: Target) throws {
        try E2EGate.requireFUSE()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/rsync") else {
            Issue.record("rsync is not installed (make setup installs it)")
            return
        }
        let source = "/tmp/favfs-rsync-src-\(UUID().uuidString.prefix(6))"
        defer { try? FileManager.default.removeItem(atPath: source) }
        try Self.makeSource(at: source)
        try t.server.start()
        let root = "rsync-\(UUID().uuidString.prefix(6).lowercased())"
        try t.server.seed(files: [:], folders: [root])
        let remote = t.server.remote()
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        defer { m.tearDown() }
        try m.mountOrThrow(password: remote.secret)
        let destination = m.path + "/" + root

        let first = try Self.rsync(source, destination)
        #expect(first.count == 24, "\(t.server.name): the first run sends every file: \(first.count)")
        let again = try Self.rsync(source, destination)
        #expect(again.isEmpty, "\(t.server.name): the second run in the same mount sent \(again.count) files: \(again.prefix(5)) — \(m.logProblems())")
        #expect(try m.unmount().succeeded)

        let told = ((try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? "")
            .contains("does not keep modification times")
        #expect(told == !t.server.traits.keepsModified, "\(t.server.name): the log \(told ? "says" : "does not say") that the server keeps no times")

        try m.mountOrThrow(password: remote.secret)
        let afterRemount = try Self.rsync(source, destination)
        #expect(afterRemount.isEmpty, "\(t.server.name): after a remount rsync sent \(afterRemount.count) files again: \(afterRemount.prefix(5)) — \(m.logProblems())")
        #expect(try m.unmount().succeeded)

        // Another computer: only what the server keeps.
        let other = try MountedFavFS(remote: remote.urlWithOptions)
        defer { other.tearDown() }
        try other.mountOrThrow(password: remote.secret)
        let fromElsewhere = try Self.rsync(source, other.path + "/" + root)
        if t.server.traits.keepsModified {
            #expect(fromElsewhere.isEmpty, "\(t.server.name): from a new cache dir rsync sent \(fromElsewhere.count) files again: \(fromElsewhere.prefix(5))")
        }
        // Whatever was sent, the content is right.
        let check = try Shell.run("/usr/bin/rsync", ["-ai", "--checksum", "--dry-run", source + "/", other.path + "/" + root + "/"])
        if check.output.contains(">f") {
            // Which bytes differ, for the record: the source against a read through the mount.
            let differing = check.output.split(separator: "\n").filter { $0.hasPrefix(">f") }.prefix(3).map { line in
                let name = String(line.split(separator: " ", maxSplits: 1).last ?? "")
                let cmp = try? Shell.run("/usr/bin/cmp", ["-l", source + "/" + name, other.path + "/" + root + "/" + name])
                let lines = (cmp?.output ?? "").split(separator: "\n")
                return "\(name): \(lines.count) bytes differ, first \(lines.prefix(3)), last \(lines.suffix(2))"
            }
            Issue.record("\(t.server.name): content differs: \(check.output.prefix(300)) — \(differing) — \(other.logProblems())")
        }
        #expect(try other.unmount().succeeded)
    }
}
