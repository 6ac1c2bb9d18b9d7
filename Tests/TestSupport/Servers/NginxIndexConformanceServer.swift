import Foundation

/// nginx autoindex (exact sizes), read with `metadata=index`: sizes from the page, no HEADs,
/// mtimes to the minute, versions size + minute. No authentication.
public final class NginxIndexConformanceServer: FolderServedConformanceServer, @unchecked Sendable {
    public static let shared = NginxIndexConformanceServer()
    public let name = "httpindex-nginx"
    private let instance: SharedServer<NginxServer>

    public var traits: ConformanceTraits {
        var t = ConformanceTraits()
        t.writable = false
        t.detectsConflicts = false
        t.hasAuthentication = false
        // The page shows minutes; every mtime is floored to the minute.
        t.modifiedPrecision = 60
        t.listsDotNames = false  // autoindex leaves them out
        return t
    }

    private init() {
        instance = SharedServer(make: {
            let s = try NginxServer()
            try s.start()
            return s
        }, stop: { $0.remove() })
    }

    private func running() throws -> NginxServer { try instance.get() }

    public func start() throws { _ = try running() }
    public func stop() { instance.stop() }

    public func remote() -> ConformanceRemote {
        let s = try! running()
        return ConformanceRemote(url: "http://127.0.0.1:\(s.port)/files/", options: ["metadata": "index"])
    }
    public func remoteWithWrongCredentials() -> ConformanceRemote? { nil }
    public func remoteThatIsDown() throws -> ConformanceRemote? {
        ConformanceRemote(url: "http://127.0.0.1:\(try FreePort.next())/files/", options: ["metadata": "index"])
    }

    public func servedFolder() throws -> URL { try running().documentRoot }
}
