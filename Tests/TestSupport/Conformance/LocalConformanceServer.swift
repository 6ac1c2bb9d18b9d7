import Foundation

/// The local reference provider: a temp folder is the "server".
public final class LocalConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = LocalConformanceServer()
    public let name = "local"
    public let root: URL

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.symlinks = true
        t.keepsModified = true
        t.hasAuthentication = false
        t.modifiedPrecision = 0.001
        return t
    }

    private init() {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-local-\(UUID().uuidString.prefix(8))")
    }

    public func start() throws { try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true) }
    public func stop() { try? FileManager.default.removeItem(at: root) }

    public func remote() -> ConformanceRemote { ConformanceRemote(url: "file://" + root.path) }
    public func remoteWithWrongCredentials() -> ConformanceRemote? { nil }
    public func remoteThatIsDown() throws -> ConformanceRemote? { nil }

    public func servedFolder() throws -> URL { root }
}

/// Seeding for servers that serve a plain folder (Apache, sshd, FTP servers, fixtures).
public enum DirectorySeeding {
    /// Writes `files` and creates `folders` under `root`; mtimes are set an hour back so that
    /// servers deriving versions from mtimes (Apache's ETags) give strong, stable versions.
    public static func seed(_ root: URL, files: [String: Data], folders: [String]) throws {
        let fm = FileManager.default
        let old = Date().addingTimeInterval(-3600)
        for folder in folders {
            try fm.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        for (path, data) in files {
            let url = root.appendingPathComponent(path)
            try fm.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
            try fm.setAttributes([.modificationDate: old], ofItemAtPath: url.path)
        }
    }

    public static func contents(_ root: URL, _ path: String) -> Data? {
        var isDir: ObjCBool = false
        let url = root.appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), !isDir.boolValue else { return nil }
        return try? Data(contentsOf: url)
    }

    /// New bytes and a new mtime (a different second than before), so size+mtime versions change too.
    public static func overwrite(_ root: URL, _ path: String, with data: Data) throws {
        let url = root.appendingPathComponent(path)
        let before = (try? FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date) ?? Date()
        try data.write(to: url)
        try FileManager.default.setAttributes([.modificationDate: before.addingTimeInterval(-120)], ofItemAtPath: url.path)
    }
}
