import ArgumentParser
import Foundation

/// `favfs thumbnail PATH [--output FILE]`.
struct ThumbnailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Get a file's preview from a remote that makes them (Favart), without downloading the file.",
        discussion: """
            The preview is kept in the mount's cache dir (thumbnails/) and survives unmount, so
            asking again costs no network. Prints where it is kept, or copies it to --output.

            Examples:
              favfs thumbnail ~/Media/2024/beach.jpg
              favfs thumbnail ~/Media/2024/beach.jpg --output /tmp/beach-preview.jpg
            """)

    @Argument(help: "A file inside a favfs mount.")
    var path: String

    @Option(name: .shortAndLong, help: "Copy the preview (a JPEG) here instead of printing where it is kept.")
    var output: String?

    func run() throws {
        do { try fetch() } catch let e as CLIError { e.exit() }
    }

    private func fetch() throws {
        let abs = URL(fileURLWithPath: (path as NSString).expandingTildeInPath).standardizedFileURL.path
        let mounts = Paths.mounts().filter { $0.fstype == "fuse.favfs" }.map(\.mountpoint)
        guard let mp = mounts.filter({ abs.hasPrefix($0 == "/" ? "/" : $0 + "/") }).max(by: { $0.count < $1.count }) else {
            throw CLIError("favfs: \(path) is not inside a favfs mount", status: .usage)
        }
        guard let s = ControlChannel.connect(mountpoint: mp) else {
            throw CLIError("favfs: the mount on \(mp) is not answering", status: .temporaryFailure)
        }
        defer { s.close() }
        s.send("thumbnail " + String(abs.dropFirst(mp == "/" ? 0 : mp.count)))
        var answer = ""
        while let line = s.readLine(timeout: 60), line != "end" { answer = line }
        guard answer.hasPrefix("file ") else {
            throw CLIError("favfs: no preview for \(path): \(answer.isEmpty ? "no answer" : answer.replacingOccurrences(of: "error: ", with: ""))")
        }
        let kept = String(answer.dropFirst("file ".count))
        guard let output else { print(kept); return }
        let dest = URL(fileURLWithPath: (output as NSString).expandingTildeInPath)
        try? FileManager.default.removeItem(at: dest)
        do { try FileManager.default.copyItem(at: URL(fileURLWithPath: kept), to: dest) }
        catch { throw CLIError("favfs: cannot write \(output): \(error.localizedDescription)", status: .ioError) }
    }
}
