import ArgumentParser
import Foundation

/// `favfs pin PATH…` and `favfs unpin PATH…`: keep files and folders on this machine.
struct PinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Keep files and folders on this machine: downloaded now, kept up to date, never evicted, readable offline.",
        discussion: """
            A pinned folder's pin covers everything below it, also what appears later. Pinned
            content does not count against --cache-size and stays after unmount. The same as
            'setfattr -n user.favfs.pin -v 1 PATH'. 'favfs status' shows the download's progress.

            Examples:
              favfs pin ~/Remote/projects/thesis
              favfs pin ~/Remote/music/*.flac
            """)

    @Argument(help: "Files or folders inside a favfs mount.")
    var paths: [String]

    func run() throws { try Pinning.set(paths, pinned: true) }
}

/// `favfs unpin PATH…`.
struct UnpinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpin",
        abstract: "Stop keeping files and folders on this machine: their content is evicted like any other.",
        discussion: """
            Unpinned content counts against --cache-size again and is evicted at unmount. An item
            pinned through a folder above it cannot be unpinned alone: unpin the folder.

            Example:
              favfs unpin ~/Remote/projects/thesis
            """)

    @Argument(help: "Files or folders inside a favfs mount.")
    var paths: [String]

    func run() throws { try Pinning.set(paths, pinned: false) }
}

/// What `pin` and `unpin` share: each path's mount is asked over its control channel.
enum Pinning {
    static func set(_ paths: [String], pinned: Bool) throws {
        let mounts = Paths.mounts().filter { $0.fstype == "fuse.favfs" }.map(\.mountpoint)
        var worst: ExitStatus? = nil
        for path in paths {
            guard let (mp, inside) = StatusCommand.locate(path, in: mounts) else {
                FileHandle.standardError.write(Data("favfs: \(path) is not inside a favfs mount\n".utf8))
                worst = worst ?? .usage
                continue
            }
            guard let s = ControlChannel.connect(mountpoint: mp) else {
                FileHandle.standardError.write(Data("favfs: the mount on \(mp) is not answering\n".utf8))
                worst = .temporaryFailure
                continue
            }
            s.send((pinned ? "pin " : "unpin ") + inside)
            var answer = ""
            while let line = s.readLine(timeout: 60), line != "end" { answer = line }
            s.close()
            if answer != "ok" {
                let why = answer.isEmpty ? "no answer" : answer.replacingOccurrences(of: "error: ", with: "")
                FileHandle.standardError.write(Data("favfs: cannot \(pinned ? "pin" : "unpin") \(path): \(why)\n".utf8))
                worst = worst ?? (answer.isEmpty ? .temporaryFailure : .dataError)
            }
        }
        if let worst { throw ExitCode(worst.rawValue) }
    }
}
