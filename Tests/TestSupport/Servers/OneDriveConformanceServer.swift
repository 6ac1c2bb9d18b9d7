import Foundation

/// The Microsoft Graph fixture (see `OneDriveServer`), written from Graph's published
/// documentation, not OneDrive itself. The remote is the folder `served` of the fixture's
/// drive, so the provider's root folder is exercised.
///
/// Traits: writable; no symlinks; times kept (`fileSystemInfo`, whole seconds); conflicts
/// checked by the server with the write (`If-Match` under the fixture's lock); paging through
/// `page_size` (`$top`); names compared without case; OneDrive's forbidden characters and
/// names ending in a dot or a space are refused.
public final class OneDriveConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = OneDriveConformanceServer()
    public let name = "onedrive"
    private let instance: SharedServer<OneDriveServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.keepsModified = true
        t.modifiedPrecision = 1
        t.conditionalWritesAreAtomic = true
        t.pageSizeOption = "page_size"
        t.forbiddenNameCharacters = ["\"", "*", ":", "<", ">", "?", "\\", "|"]
        t.keepsTrailingDotsAndSpaces = false
        return t
    }

    private init() {
        instance = SharedServer(make: {
            let s = try OneDriveServer()
            try FileManager.default.createDirectory(at: s.root.appendingPathComponent("served"), withIntermediateDirectories: true)
            try s.start()
            return s
        }, stop: { $0.remove() })
    }

    private func running() throws -> OneDriveServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    public func remote() -> ConformanceRemote {
        let s = try! running()
        return ConformanceRemote(url: "onedrive:///served", options: ["client_id": s.clientID, "endpoint": s.endpoint], secret: s.refreshToken)
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        let s = try! running()
        return ConformanceRemote(url: "onedrive:///served", options: ["client_id": s.clientID, "endpoint": s.endpoint], secret: "revoked-refresh-token")
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        let s = try running()
        return ConformanceRemote(url: "onedrive:///served", options: ["client_id": s.clientID, "endpoint": "http://127.0.0.1:\(try FreePort.next())"],
                                 secret: s.refreshToken)
    }

    public func servedFolder() throws -> URL { try running().root.appendingPathComponent("served") }
}
