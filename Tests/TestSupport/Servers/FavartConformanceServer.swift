import Foundation

/// The Favart fixture server (`Tests/Fixtures/favart_server.py`) serving a temp folder.
///
/// Traits, honestly: writable but no rename (the API has none: `move` is `.notSupported`, and
/// the provider's capabilities leave out `.rename`); no symlinks; no mtimes at all (listings
/// have none); conflicts are detected when the size changed, since versions are sizes (hence
/// `overwrite` refuses same-size content); uploads over 25 MiB are `.tooLarge`; no
/// authentication. Files must be images to be listed, so test files are named `x.jpg`.
public final class FavartConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = FavartConformanceServer()
    public let name = "favart"
    private let instance: SharedServer<FavartServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.writable = true
        t.symlinks = false
        t.keepsModified = false
        t.detectsConflicts = true
        t.modifiedPrecision = nil
        t.listsEmptyFolders = true
        t.maxUploadSize = 25 * 1024 * 1024
        t.hasAuthentication = false
        return t
    }

    private init() {
        instance = SharedServer(make: {
            let s = try FavartServer()
            try s.start()
            return s
        }, stop: { $0.remove() })
    }

    private func running() throws -> FavartServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    public func remote() -> ConformanceRemote { ConformanceRemote(url: try! running().url) }
    public func remoteWithWrongCredentials() -> ConformanceRemote? { nil }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        ConformanceRemote(url: "favart://127.0.0.1:\(try FreePort.next())/")
    }

    /// Only images are listed: "x" → "x.jpg".
    public func fileName(_ base: String) -> String { base + ".jpg" }

    public func servedFolder() throws -> URL { try running().root }

    /// Favart versions are sizes: content of the same size would not be a new version, so it is
    /// refused here rather than making a conflict test pass or fail by accident.
    public func overwrite(_ path: String, with data: Data) throws {
        let root = try running().root
        let old = try? FileManager.default.attributesOfItem(atPath: root.appendingPathComponent(path).path)[.size] as? Int
        if let old, old == data.count {
            throw ShellError("favart: overwriting \(path) with \(data.count) bytes keeps its size, so its version would not change (versions are sizes)")
        }
        try DirectorySeeding.overwrite(root, path, with: data)
    }
}
