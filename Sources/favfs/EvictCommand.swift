import ArgumentParser
import Foundation

/// `favfs evict PATH…`: free up space.
struct EvictCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evict",
        abstract: "Free up space: drop the downloaded content of files and folders; they stay in the mount and download again when read.",
        discussion: """
            A folder frees everything below it. Names, sizes and times stay visible. Pins at or
            below a path are removed first (said on the output); a file pinned through a folder
            above it is refused: unpin or free that folder. A file changed here and not uploaded
            yet (its only copy) or open is kept, and named on standard error; the exit status is
            then 75, so a later try can free it. 'favfs status PATH' then says "placeholder".

            Examples:
              favfs evict ~/Remote/videos
              favfs evict ~/Remote/photos/*.raw
            """)

    @Argument(help: "Files or folders inside a favfs mount.")
    var paths: [String]

    func run() throws {
        let mounts = Paths.mounts().filter { $0.fstype == "fuse.favfs" }.map(\.mountpoint)
        var worst: ExitStatus? = nil
        func complain(_ text: String, _ status: ExitStatus) {
            FileHandle.standardError.write(Data("favfs: \(text)\n".utf8))
            worst = worst ?? status
        }
        for path in paths {
            guard let (mp, inside) = StatusCommand.locate(path, in: mounts) else {
                complain("\(path) is not inside a favfs mount", .usage)
                continue
            }
            guard let s = ControlChannel.connect(mountpoint: mp) else {
                complain("the mount on \(mp) is not answering", .temporaryFailure)
                continue
            }
            s.send("evict " + inside)
            var lines: [String] = []
            while let line = s.readLine(timeout: 120), line != "end" { lines.append(line) }
            s.close()
            let local = { (id: Substring) in (mp == "/" ? "" : mp) + id }
            var answered = false
            for line in lines {
                if line.hasPrefix("unpinned ") {
                    print("unpinned \(local(line.dropFirst("unpinned ".count)))")
                } else if line.hasPrefix("kept ") {
                    complain("kept \(local(line.dropFirst("kept ".count)))", .temporaryFailure)
                } else if line.hasPrefix("freed ") {
                    let n = line.split(separator: " ").dropFirst().compactMap { Int64($0) }
                    if n.count == 2 { print("\(path): freed \(Plural.count(Int(n[0]), "file")), \(ByteSize.format(n[1]))") }
                    answered = true
                } else if line.hasPrefix("error: ") {
                    complain("cannot free up space at \(path): \(line.dropFirst("error: ".count))", .dataError)
                    answered = true
                }
            }
            if !answered { complain("cannot free up space at \(path): no answer from the mount on \(mp)", .temporaryFailure) }
        }
        if let worst { throw ExitCode(worst.rawValue) }
    }
}
