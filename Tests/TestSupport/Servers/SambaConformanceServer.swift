import Foundation

/// Samba's smbd (see `SambaServer`); the remote is the folder `served` inside the share
/// `files`, so share and path are both exercised.
public final class SambaConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = SambaConformanceServer()
    public let name = "smb"
    private let instance: SharedServer<SambaServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.keepsModified = true
        // Listings and stats carry the server's 100 ns times.
        t.modifiedPrecision = 1
        // Replacing a version moves the file aside first: of two writers one wins that rename.
        t.forbiddenNameCharacters = Set("\\:*?\"<>|").union((1..<32).map { Character(Unicode.Scalar(UInt8($0))) })
        t.keepsTrailingDotsAndSpaces = false
        return t
    }

    private init() {
        instance = SharedServer(make: {
            guard SambaServer.isAvailable else { throw ShellError("Samba is not installed (/usr/sbin/smbd; apt-get install samba)") }
            let s = try SambaServer()
            try FileManager.default.createDirectory(at: s.share.appendingPathComponent("served"), withIntermediateDirectories: true)
            try s.start()
            return s
        }, stop: { $0.remove() })
    }

    private func running() throws -> SambaServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    public func remote() -> ConformanceRemote {
        let s = try! running()
        return ConformanceRemote(url: "smb://\(s.user)@127.0.0.1:\(s.port)/files/served", secret: s.password)
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        let s = try! running()
        return ConformanceRemote(url: "smb://\(s.user)@127.0.0.1:\(s.port)/files/served", secret: "wrong-password")
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        let s = try running()
        return ConformanceRemote(url: "smb://\(s.user)@127.0.0.1:\(try FreePort.next())/files/served", secret: s.password)
    }

    public func servedFolder() throws -> URL { try running().share.appendingPathComponent("served") }
}
