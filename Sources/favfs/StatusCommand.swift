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
              favfs status --json                # the same for scripts (field names: man favfs, or docs/commands.md)
              favfs status --watch               # live: each upload and download, rate, ETA
            """)

    @Argument(help: "Files or folders inside a favfs mount.")
    var paths: [String] = []

    @Flag(help: "Print JSON: {\"mounts\": [...]}, or {\"items\": [{\"path\", \"state\"}]} for paths.")
    var json = false

    @Flag(help: "Redraw every --interval seconds: each upload and download (bytes, rate, ETA) and pending uploads; Ctrl-C ends it, and so does the mount going away.")
    var watch = false

    @Option(help: ArgumentHelp("Seconds between redraws with --watch.", valueName: "seconds"))
    var interval: Double = 1

    func run() throws {
        let mounts = Paths.mounts().filter { $0.fstype == "fuse.favfs" }.map(\.mountpoint)
        if watch { return try runWatch(mounts: mounts) }
        if json { return try runJSON(mounts: mounts) }
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
            guard let (mp, rel) = Self.locate(path, in: mounts) else {
                FileHandle.standardError.write(Data("favfs: \(path) is not inside a favfs mount\n".utf8))
                failed = true
                continue
            }
            let state = ask(mp, "status \(rel)")?.first ?? "not answering"
            print("\(state)\t\(path)")
        }
        if failed { throw ExitCode(ExitStatus.usage.rawValue) }
    }

    /// The deepest favfs mount containing `path`, and the path inside it ("/…").
    static func locate(_ path: String, in mounts: [String]) -> (mountpoint: String, inside: String)? {
        let abs = URL(fileURLWithPath: (path as NSString).expandingTildeInPath).standardizedFileURL.path
        guard let mp = mounts.filter({ abs == $0 || abs.hasPrefix($0 == "/" ? "/" : $0 + "/") }).max(by: { $0.count < $1.count }) else {
            return nil
        }
        return (mp, abs == mp ? "/" : String(abs.dropFirst(mp == "/" ? 0 : mp.count)))
    }

    private struct ItemState: Codable { var path: String; var mountpoint: String?; var state: String }
    private struct Mounts: Codable { var mounts: [MountStatusReport] }
    private struct Items: Codable { var items: [ItemState] }

    private func runJSON(mounts: [String]) throws {
        if paths.isEmpty {
            let reports = mounts.map { mp in
                ask(mp, "status-json")?.first.flatMap { JSONOutput.decode(MountStatusReport.self, from: $0) } ?? .notAnswering(mp)
            }
            print(JSONOutput.encode(Mounts(mounts: reports)))
            return
        }
        var items: [ItemState] = [], failed = false
        for path in paths {
            guard let (mp, rel) = Self.locate(path, in: mounts) else {
                items.append(ItemState(path: path, mountpoint: nil, state: "not inside a favfs mount"))
                failed = true
                continue
            }
            items.append(ItemState(path: path, mountpoint: mp, state: ask(mp, "status \(rel)")?.first ?? "not answering"))
        }
        print(JSONOutput.encode(Items(items: items)))
        if failed { throw ExitCode(ExitStatus.usage.rawValue) }
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
