import ArgumentParser
import Foundation

/// `favfs unmount MOUNTPOINT`.
struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount",
        abstract: "Unmount; cached content is evicted (placeholders stay, so the next mount browses at once).",
        discussion: """
            Examples:
              favfs unmount ~/Remote
              favfs unmount ~/Remote --keep-cache
            """)

    @Argument(help: "The mount point.", completion: .directory)
    var mountpoint: String

    @Flag(help: "Keep the downloaded content on disk for the next mount.")
    var keepCache = false

    func run() throws {
        do { try unmount() } catch let e as CLIError { e.exit() }
    }

    private func unmount() throws {
        let expanded = (mountpoint as NSString).expandingTildeInPath
        // A dead mount cannot be resolved (ENOTCONN): fall back to the absolute path.
        let mp = Paths.real(expanded) ?? URL(fileURLWithPath: expanded).standardizedFileURL.path
        guard let s = ControlChannel.connect(mountpoint: mp) else {
            let (mounted, fstype) = Paths.isMountpoint(mp)
            guard mounted, fstype?.hasPrefix("fuse") == true else { throw CLIError("favfs: \(mp) is not mounted", status: .usage) }
            if Self.answers(mp) {
                // Alive but out of reach (a daemon of another user, a socket folder removed):
                // the kernel unmount lets it finish its uploads (or journal them) as it exits.
                let r = fusermount(["-u", mp])
                guard r.status == 0 else {
                    throw CLIError("favfs: cannot reach the favfs process of \(mp) (no control socket in \(Paths.controlDirectories(uid: Paths.fuseOwner(of: mp) ?? getuid()).joined(separator: " or "))), and cannot unmount it: \(r.output.trimmingCharacters(in: .whitespacesAndNewlines))")
                }
                print("favfs: unmounted \(mp) without its favfs process's answer (no control socket found); it finishes pending uploads as it exits, or keeps them for the next mount")
                return
            }
            let r = fusermount(["-u", "-z", mp])
            guard r.status == 0 else { throw CLIError("favfs: cannot unmount \(mp): \(r.output)") }
            print("favfs: unmounted \(mp) (its favfs process was gone; cached content was not evicted)")
            return
        }
        defer { s.close() }
        s.send("prepare-unmount keep-cache=\(keepCache ? 1 : 0)")
        // Pending uploads finish first; the daemon reports progress until it is ready.
        let progress = UploadProgress()
        while let line = s.readLine(timeout: 3600), line != "ready" {
            if line.hasPrefix("progress ") {
                let parts = line.split(separator: " ")
                progress.show(items: Int(parts[1]) ?? 0, bytes: Int64(parts[2]) ?? 0)
            } else {
                progress.clear()
                FileHandle.standardError.write(Data(("favfs: " + line + "\n").utf8))
            }
        }
        progress.clear()
        let r = fusermount(["-u", mp])
        guard r.status == 0 else {
            s.send("cancel")
            let busy = r.output.contains("busy")
            throw CLIError("favfs: cannot unmount \(mp): \(r.output.trimmingCharacters(in: .whitespacesAndNewlines))" +
                           (busy ? " — a program still uses it (see 'fuser -m \(mp)')" : ""))
        }
        if let line = s.readLine(timeout: 120), line.hasPrefix("evicted ") {
            let parts = line.split(separator: " ")
            let files = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            let bytes = parts.count > 2 ? Int64(parts[2]) ?? 0 : 0
            print(keepCache ? "favfs: unmounted \(mp); cached content kept"
                            : "favfs: unmounted \(mp); evicted \(Plural.count(files, "cached file")) (\(ByteSize.format(bytes)))")
        } else {
            print("favfs: unmounted \(mp)")
        }
    }

    /// Whether the file system on `mp` answers a stat within a few seconds (a mount whose
    /// process died answers ENOTCONN at once).
    static func answers(_ mp: String) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let result = Box()
        Thread.detachNewThread {
            var st = stat()
            result.value = stat(mp, &st) == 0
            done.signal()
        }
        return done.wait(timeout: .now() + 5) == .success && result.value
    }

    private final class Box: @unchecked Sendable { var value = false }

    private func fusermount(_ args: [String]) -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/fusermount3")
        p.arguments = args
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        do { try p.run() } catch { return (127, "cannot run fusermount3: \(error.localizedDescription)") }
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: out, as: UTF8.self))
    }
}

/// The unmount's progress line: redrawn in place on a terminal, one line a second otherwise.
final class UploadProgress {
    private let tty = isatty(STDERR_FILENO) == 1
    private var shown = false
    private var lastLine = Date.distantPast
    private var first: Int64?

    func show(items: Int, bytes: Int64) {
        if first == nil { first = bytes }
        let text = "uploading: \(items) file\(items == 1 ? "" : "s") left (\(ByteSize.format(bytes)))"
        if tty {
            let total = max(first ?? bytes, 1)
            let done = Int(20 * Double(total - bytes) / Double(total))
            let bar = String(repeating: "#", count: max(0, done)) + String(repeating: "-", count: max(0, 20 - done))
            FileHandle.standardError.write(Data("\r\u{1B}[K[\(bar)] \(text)".utf8))
            shown = true
        } else if Date().timeIntervalSince(lastLine) >= 1 {
            FileHandle.standardError.write(Data("favfs: \(text)\n".utf8))
            lastLine = Date()
        }
    }

    func clear() {
        if shown { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)); shown = false }
    }
}
