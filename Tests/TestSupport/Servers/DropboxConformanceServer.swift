import Foundation

/// The Dropbox API fixture (see `DropboxServer`), written from Dropbox's published API, not
/// Dropbox itself. The remote is the folder `served` of the fixture's Dropbox, so the provider's
/// root folder is exercised.
///
/// Traits: writable; no symlinks; no times set from here (the API sets `client_modified` only
/// with an upload); conflicts checked by the server with the write (`update` with the rev,
/// under the fixture's lock); names compared without case, as Dropbox does; a backslash and
/// DEL are refused (Dropbox's `disallowed_name`), while Windows' other characters are kept.
public final class DropboxConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = DropboxConformanceServer()
    public let name = "dropbox"
    private let instance: SharedServer<DropboxServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.keepsModified = false
        t.modifiedPrecision = 1
        t.conditionalWritesAreAtomic = true
        t.forbiddenNameCharacters = ["\\", "\u{7F}"]
        // Dropbox refuses a trailing space but keeps a trailing dot; the awkward names end in dots only.
        t.keepsTrailingDotsAndSpaces = true
        return t
    }

    private init() {
        instance = SharedServer(make: {
            let s = try DropboxServer()
            try FileManager.default.createDirectory(at: s.root.appendingPathComponent("served"), withIntermediateDirectories: true)
            try s.start()
            return s
        }, stop: { $0.remove() })
    }

    private func running() throws -> DropboxServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    public func remote() -> ConformanceRemote {
        let s = try! running()
        return ConformanceRemote(url: "dropbox:///served", options: ["client_id": s.clientID, "endpoint": s.endpoint], secret: s.refreshToken)
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        let s = try! running()
        return ConformanceRemote(url: "dropbox:///served", options: ["client_id": s.clientID, "endpoint": s.endpoint], secret: "revoked-refresh-token")
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        let s = try running()
        return ConformanceRemote(url: "dropbox:///served", options: ["client_id": s.clientID, "endpoint": "http://127.0.0.1:\(try FreePort.next())"],
                                 secret: s.refreshToken)
    }

    public func servedFolder() throws -> URL { try running().root.appendingPathComponent("served") }
}
