import Foundation

/// One test server, started on first use and shared by every test of the process. Thread-safe;
/// a server found dead (`isAlive` false) is started again.
public final class SharedServer<Server>: @unchecked Sendable {
    private let lock = NSLock()
    private var server: Server?
    private let make: () throws -> Server
    private let isAlive: (Server) -> Bool
    private let end: (Server) -> Void

    /// `make` creates and starts the server; `stop` stops it and removes its files.
    public init(make: @escaping () throws -> Server, isAlive: @escaping (Server) -> Bool = { _ in true },
                stop: @escaping (Server) -> Void) {
        self.make = make; self.isAlive = isAlive; self.end = stop
    }

    /// The running server, started now if needed.
    public func get() throws -> Server {
        lock.lock(); defer { lock.unlock() }
        if let server, isAlive(server) { return server }
        let s = try make()
        server = s
        return s
    }

    public func stop() {
        lock.lock(); defer { lock.unlock() }
        if let server { end(server) }
        server = nil
    }
}

/// A conformance server whose remote serves a plain local folder (Apache, nginx, sshd,
/// pyftpdlib, the Favart fixture, the local provider): server-side seeding and checks work on
/// that folder directly.
public protocol FolderServedConformanceServer: ConformanceServer {
    /// The folder the remote's root serves (the server is started if needed).
    func servedFolder() throws -> URL
    /// Called after the tests changed the folder behind the server's back (Apache wants its
    /// files owned by www-data).
    func servedFolderChanged() throws
}

extension FolderServedConformanceServer {
    public func servedFolderChanged() throws {}

    public func seed(files: [String: Data], folders: [String]) throws {
        try DirectorySeeding.seed(try servedFolder(), files: files, folders: folders)
        try servedFolderChanged()
    }
    public func contents(of path: String) throws -> Data? { DirectorySeeding.contents(try servedFolder(), path) }
    public func exists(_ path: String) throws -> Bool {
        FileManager.default.fileExists(atPath: try servedFolder().appendingPathComponent(path).path)
    }
    public func overwrite(_ path: String, with data: Data) throws {
        try DirectorySeeding.overwrite(try servedFolder(), path, with: data)
        try servedFolderChanged()
    }
    public func remove(_ path: String) throws {
        try FileManager.default.removeItem(at: try servedFolder().appendingPathComponent(path))
    }
}
