import Foundation

/// moto_server with signatures enforced (see `MotoServer`), one bucket; the remote is the key
/// prefix "conformance/" of it, so the provider's prefix handling is exercised too.
public final class S3ConformanceServer: ConformanceServer, @unchecked Sendable {
    public static let shared = S3ConformanceServer()
    public let name = "s3"
    static let bucket = "favfs-conformance"
    static let prefix = "conformance/"
    private let instance: SharedServer<MotoServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.pageSizeOption = "max_keys"
        // Seeded folders are "name/" marker objects, as favfs makes them: empty ones list.
        t.listsEmptyFolders = true
        // Listings say milliseconds, HEAD whole seconds: the provider floors both to the second.
        t.modifiedPrecision = 1
        // moto checks If-Match and then writes, with no lock between (moto/s3/responses.py,
        // put_object): two PUTs with the same If-Match arriving together can both pass (seen in
        // CI under load). AWS S3 checks it with the write; favfs sends it either way.
        t.conditionalWritesAreAtomic = false
        return t
    }

    private init() {
        instance = SharedServer(make: {
            let s = try MotoServer(bucket: Self.bucket)
            try s.start()
            return s
        }, stop: { $0.stop() })
    }

    private func running() throws -> MotoServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    public func remote() -> ConformanceRemote {
        let s = try! running()
        return ConformanceRemote(url: "s3://\(Self.bucket)/\(Self.prefix)",
                                 options: ["endpoint": s.endpoint, "access_key_id": s.accessKeyId, "region": s.region],
                                 secret: s.secretAccessKey)
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? {
        var r = remote(); r.secret = "wrong-secret"; return r
    }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        var r = remote()
        r.options["endpoint"] = "http://127.0.0.1:\(try FreePort.next())"
        return r
    }

    private func key(_ path: String) -> String { Self.prefix + path.split(separator: "/").joined(separator: "/") }

    public func seed(files: [String: Data], folders: [String]) throws {
        try running().seed(files: Dictionary(uniqueKeysWithValues: files.map { (key($0.key), $0.value) }),
                           folderMarkers: folders.map { key($0) + "/" })
    }
    public func contents(of path: String) throws -> Data? { try running().get(key(path)) }
    public func exists(_ path: String) throws -> Bool { try running().exists(key(path)) }
    /// A PUT of new bytes: a new ETag (the MD5 of the content) as long as the bytes differ.
    public func overwrite(_ path: String, with data: Data) throws { try running().put(key(path), data) }
    /// Deletes the key and every key below it as a folder (and its folder marker).
    public func remove(_ path: String) throws { try running().delete(key(path)) }
}
