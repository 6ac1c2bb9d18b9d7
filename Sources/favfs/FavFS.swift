import ArgumentParser

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
        version: FavFSVersion.string,
        subcommands: [MountCommand.self, UnmountCommand.self, StatusCommand.self, ThumbnailCommand.self, RemoteCommand.self]
    )
}

enum FavFSVersion {
    static let string = "0.1.0"
}
