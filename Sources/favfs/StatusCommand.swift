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

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds between redraws with --watch.", valueName: "seconds"))
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
            switch state(of: path, mounts: mounts) {
            case .reported(_, let state):
                print("\(state)\t\(path)")
            case .failed(let message, _):
                FileHandle.standardError.write(Data("favfs: \(message)\n".utf8))
                failed = true
            }
        }
        if failed { throw ExitCode(ExitStatus.usage.rawValue) }
    }

    /// What `favfs status PATH` says of one path: its state in its mount, or why there is none.
    private enum PathState {
        case reported(mountpoint: String, state: String)
        /// The message for stderr, and the short form for `--json`'s "state".
        case failed(message: String, state: String)
    }

    private func state(of path: String, mounts: [String]) -> PathState {
        let missing = "no such file or folder"
        guard let (mp, rel) = Self.locate(path, in: mounts) else {
            // Outside every mount a stat cannot hang on a daemon: say which mistake it is.
            if !Self.exists(path) { return .failed(message: "\(path): \(missing) (check the path; status takes files or folders inside a favfs mount)", state: missing) }
            return .failed(message: "\(path) is not inside a favfs mount ('favfs status' without a path lists the mounts)", state: "not inside a favfs mount")
        }
        guard let state = ask(mp, "status \(rel)")?.first else { return .reported(mountpoint: mp, state: "not answering") }
        guard state.hasPrefix("unknown") else { return .reported(mountpoint: mp, state: state) }
        // Not seen by the mount yet: a stat looks it up (the daemon answers, so it cannot hang).
        guard Self.exists(path) else {
            return .failed(message: "\(path): \(missing) in the mount on \(mp) (check the path)", state: missing)
        }
        return .reported(mountpoint: mp, state: ask(mp, "status \(rel)")?.first ?? "not answering")
    }

    /// Whether `path` names something (a dangling symbolic link too).
    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat((path as NSString).expandingTildeInPath, &st) == 0 || (errno != ENOENT && errno != ENOTDIR)
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
            switch state(of: path, mounts: mounts) {
            case .reported(let mp, let state):
                items.append(ItemState(path: path, mountpoint: mp, state: state))
            case .failed(_, let state):
                items.append(ItemState(path: path, mountpoint: nil, state: state))
                failed = true
            }
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
