import ArgumentParser
import Foundation

/// `favfs status [PATH ...]`.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show each mount's cache and pending uploads, or the state of files and folders in a mount.",
        discussion: """
            Examples:
              favfs status                       # every favfs mount
              favfs status ~/Remote/photos/a.jpg # placeholder, partial 40%, materialized, dirty...
            """)

    @Argument(help: "Files or folders inside a favfs mount.")
    var paths: [String] = []

    func run() throws {
        let mounts = Paths.mounts().filter { $0.fstype == "fuse.favfs" }.map(\.mountpoint)
        if paths.isEmpty {
            if mounts.isEmpty { print("no favfs mounts"); return }
            for (i, mp) in mounts.enumerated() {
                if i > 0 { print() }
                print(ask(mp, "status")?.joined(separator: "\n") ?? "mountpoint: \(mp)\nnot answering (its favfs process is gone? 'favfs unmount \(mp)')")
            }
            return
        }
        var failed = false
        for path in paths {
            let abs = URL(fileURLWithPath: (path as NSString).expandingTildeInPath).standardizedFileURL.path
            // The deepest favfs mount containing the path.
            guard let mp = mounts.filter({ abs == $0 || abs.hasPrefix($0 == "/" ? "/" : $0 + "/") }).max(by: { $0.count < $1.count }) else {
                FileHandle.standardError.write(Data("favfs: \(path) is not inside a favfs mount\n".utf8))
                failed = true
                continue
            }
            let rel = abs == mp ? "/" : String(abs.dropFirst(mp == "/" ? 0 : mp.count))
            let state = ask(mp, "status \(rel)")?.first ?? "not answering"
            print("\(state)\t\(path)")
        }
        if failed { throw ExitCode(1) }
    }

    private func ask(_ mountpoint: String, _ command: String) -> [String]? {
        guard let s = ControlChannel.connect(mountpoint: mountpoint) else { return nil }
        defer { s.close() }
        s.send(command)
        var lines: [String] = []
        while let line = s.readLine(timeout: 10), line != "end" { lines.append(line) }
        return lines
    }
}
