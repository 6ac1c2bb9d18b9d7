import ArgumentParser
import Curl
import Foundation
import FUSEBridge

/// `favfs`: mount remote storage as a local folder. (The entry point: @main, not main.swift,
/// whose top-level code would be MainActor-bound.)
@main
struct FavFS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "favfs",
        abstract: "Mount remote storage (WebDAV, S3, SFTP, FTP, HTTP, a local folder) as a local folder, with content fetched on demand.",
        discussion: """
            Examples:
              favfs mount ~/Remote --remote dav://nas.local:8080/files/
              echo "$PASS" | favfs remote add nas dav://me@nas.local:8080/files/ \\
                  --password-stdin --default
              favfs mount ~/Remote                 # the default remote
              favfs status
              favfs unmount ~/Remote
            """,
        version: FavFSVersion.description,
        subcommands: [MountCommand.self, UnmountCommand.self, StatusCommand.self, ThumbnailCommand.self, PinCommand.self, UnpinCommand.self, EvictCommand.self, RemoteCommand.self]
    )

    /// The parser's own entry point, with two conventions in front of it: no arguments at all is
    /// a usage error (64), and `favfs SOURCE MOUNTPOINT -o …` is how mount.fuse3 runs us.
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.isEmpty {
            FileHandle.standardError.write(Data((helpMessage() + "\n").utf8))
            Glibc.exit(ExitStatus.usage.rawValue)
        }
        let names = Set(configuration.subcommands.map { $0._commandName } + ["help"])
        do {
            if let translated = try MountHelperArguments.translate(arguments, subcommands: names) { arguments = translated }
            var command: ParsableCommand
            do { command = try parseAsRoot(arguments) } catch {
                // The parser's message names the symptom ("2 unexpected arguments"); say the mistake.
                if let diagnosis = CommandLineDiagnosis.diagnose(arguments) { diagnosis.exit() }
                throw error
            }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as CLIError {
            error.exit()
        } catch {
            exit(withError: error)
        }
    }
}

enum FavFSVersion {
    static let string = "0.1.0"

    /// `favfs --version`: ours, then what we run on (the libraries decide which protocols work).
    static var description: String {
        (["favfs \(string)", "libfuse \(FUSEMount.libfuseVersion)"] + CurlVersion.lines).joined(separator: "\n")
    }
}
