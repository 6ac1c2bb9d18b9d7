import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// Shared by the Favart integration tests: a provider for a fixture server, content sources
/// and sinks as temp files (like the content cache's), server-side seeding.
enum FavartTesting {
    static func provider(_ server: FavartServer) -> FavartProvider {
        FavartProvider(configuration: .init(baseURL: server.httpURL, remoteDescription: server.url), transport: CurlTransport())
    }

    /// A provider for a port where nothing listens.
    static func providerThatIsDown() throws -> FavartProvider {
        let port = try FreePort.next()
        return FavartProvider(configuration: .init(baseURL: "http://127.0.0.1:\(port)", remoteDescription: "favart://127.0.0.1:\(port)/"),
                              transport: CurlTransport())
    }

    /// Writes files (parents created) and folders under the served root; mtimes an hour back.
    static func seed(_ server: FavartServer, files: [String: Data] = [:], folders: [String] = []) throws {
        try DirectorySeeding.seed(server.root, files: files, folders: folders)
    }

    /// Deterministic bytes.
    static func bytes(_ count: Int, seed: UInt64 = 1) -> Data {
        var rng = SeededRandom(seed: seed)
        return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    /// The bytes of a served file, or nil.
    static func served(_ server: FavartServer, _ path: String) -> Data? {
        DirectorySeeding.contents(server.root, String(path.drop(while: { $0 == "/" })))
    }

    /// A real JPEG made by Pillow (for previews); nil without Pillow.
    static func makeJPEG(at url: URL, width: Int, height: Int) throws {
        guard let python = FavartServer.python else { throw ShellError("python3 missing") }
        let script = "import sys; from PIL import Image; Image.new('RGB', (\(width), \(height)), (40, 120, 200)).save(sys.argv[1], 'JPEG')"
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let r = try Shell.run(python, ["-c", script, url.path])
        guard r.status == 0 else { throw ShellError("making a JPEG failed: \(r.error)") }
    }

    /// Width and height from a JPEG's SOF marker.
    static func jpegSize(_ data: Data) -> (width: Int, height: Int)? {
        let b = [UInt8](data)
        guard b.count > 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        var i = 2
        while i + 9 < b.count {
            guard b[i] == 0xFF else { return nil }
            let marker = b[i + 1]
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) {
                return (Int(b[i + 7]) << 8 | Int(b[i + 8]), Int(b[i + 5]) << 8 | Int(b[i + 6]))
            }
            i += 2 + length
        }
        return nil
    }
}

/// Temp files standing in for cache files: content sources for uploads, sinks for reads.
final class FavartTempFiles: @unchecked Sendable {
    private let lock = NSLock()
    private var paths: [String] = []
    private var fds: [Int32] = []

    func source(_ data: Data) throws -> ContentSource {
        let fd = try file(data)
        return ContentSource(fd: fd, length: Int64(data.count))
    }

    /// A sparse file of `size` bytes to read into.
    func sink(size: Int64 = 0) throws -> ContentSink {
        let fd = try file(Data())
        if size > 0 { ftruncate(fd, off_t(size)) }
        return ContentSink(fd: fd)
    }

    func read(_ sink: ContentSink, _ range: Range<Int64>) -> Data {
        var buffer = [UInt8](repeating: 0, count: range.count)
        let n = pread(sink.fd, &buffer, range.count, off_t(range.lowerBound))
        return Data(buffer.prefix(max(0, n)))
    }

    private func file(_ data: Data) throws -> Int32 {
        let path = NSTemporaryDirectory() + "favfs-favart-test-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDWR)
        guard fd >= 0 else { throw ShellError("open \(path) failed") }
        lock.withLock {
            paths.append(path)
            fds.append(fd)
        }
        return fd
    }

    deinit {
        for fd in fds { close(fd) }
        for p in paths { unlink(p) }
    }
}
