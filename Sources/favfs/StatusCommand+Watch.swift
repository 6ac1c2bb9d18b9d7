import ArgumentParser
import Foundation

/// `favfs status --watch`: the mounts' transfers, redrawn in place on a terminal (ANSI clear
/// screen), one block per interval otherwise (a log, a pipe, a test).
extension StatusCommand {
    func runWatch(mounts: [String]) throws {
        do { try MountCommand.checkSeconds("--interval", interval, zero: false) } catch {
            CLIError("favfs: \(error)", status: .usage).exit()
        }
        var watched: [String] = []
        for path in paths {
            guard let (mp, _) = Self.locate(path, in: mounts) else {
                FileHandle.standardError.write(Data("favfs: \(path) is not inside a favfs mount\n".utf8))
                throw ExitCode(ExitStatus.usage.rawValue)
            }
            if !watched.contains(mp) { watched.append(mp) }
        }
        if paths.isEmpty { watched = mounts }
        if watched.isEmpty { print("no favfs mounts"); return }
        let terminal = isatty(STDOUT_FILENO) == 1
        let time = DateFormatter()
        time.dateFormat = "HH:mm:ss"
        while true {
            let mounted = Set(Paths.mounts().filter { $0.fstype == "fuse.favfs" }.map(\.mountpoint))
            var blocks: [String] = []
            for mp in watched where mounted.contains(mp) {
                guard let report = Self.report(mp) else { continue }
                blocks.append(Self.render(report))
            }
            if blocks.isEmpty {
                FileHandle.standardError.write(Data("favfs: \(watched.joined(separator: ", ")) no longer mounted\n".utf8))
                return
            }
            let text = "favfs status at \(time.string(from: Date())) (every \(interval) s; Ctrl-C ends)\n\n" + blocks.joined(separator: "\n\n")
            // Home and clear screen, then the block: the view is redrawn in place.
            // Written at once (not through print's buffer): a pipe sees each block as it comes.
            FileHandle.standardOutput.write(Data((terminal ? "\u{1B}[H\u{1B}[2J" + text + "\n" : text + "\n\n").utf8))
            Thread.sleep(forTimeInterval: interval)
        }
    }

    /// One mount's report, or nil when its process does not answer.
    private static func report(_ mountpoint: String) -> MountStatusReport? {
        guard let s = ControlChannel.connect(mountpoint: mountpoint) else { return nil }
        defer { s.close() }
        s.send("status-json")
        var lines: [String] = []
        while let line = s.readLine(timeout: 10), line != "end" { lines.append(line) }
        return lines.first.flatMap { JSONOutput.decode(MountStatusReport.self, from: $0) }
    }

    static func render(_ r: MountStatusReport) -> String {
        var lines = ["\(r.mountpoint)  (\(r.remote))"]
        if let u = r.uploads {
            lines.append("  uploads: \(u.pending) pending (\(ByteSize.format(u.pendingBytes)))" + (u.failed.isEmpty ? "" : ", \(u.failed.count) failed"))
        }
        let transfers = r.transfers ?? []
        if transfers.isEmpty { lines.append("  no transfers") }
        for t in transfers { lines.append("  " + t.line) }
        return lines.joined(separator: "\n")
    }
}
