import Foundation
import Testing
import FavFSCore
import Providers
import TestSupport

/// One provider and its real server, as a test argument.
struct ConformanceTarget: Sendable, CustomStringConvertible {
    let server: any ConformanceServer
    var description: String { server.name }

    /// Every provider the suite runs against. Each server starts on first use and stops at exit.
    static let all: [ConformanceTarget] = ConformanceServers.all.map(ConformanceTarget.init)

    /// The provider for `remote`, made the way `favfs mount` makes it.
    func provider(_ remote: ConformanceRemote, extraOptions: [String: String] = [:]) throws -> any Provider {
        let url = try RemoteURL(remote.url)
        return try ProviderFactory.make(RemoteConfiguration(url: url, options: remote.options.merging(extraOptions) { _, new in new },
                                                            secret: remote.secret))
    }

    /// The provider for the running server's remote.
    func provider(extraOptions: [String: String] = [:]) throws -> any Provider {
        try server.start()
        return try provider(server.remote(), extraOptions: extraOptions)
    }

    /// A fresh folder name for one test, so tests can share a server.
    func area(_ label: String) -> String { "\(label)-\(UUID().uuidString.prefix(8).lowercased())" }
}

/// Reads and errors, shared by the cases.
enum Conformance {
    /// Reads `range` of `item` through the provider into a temp file and returns the bytes at `range`.
    static func read(_ provider: any Provider, _ item: Item, _ range: Range<Int64>) async throws -> Data {
        let path = NSTemporaryDirectory() + "favfs-conf-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw ShellError("open \(path)") }
        defer { close(fd); unlink(path) }
        let written = try await provider.readContents(of: item, range: range, into: ContentSink(fd: fd))
        #expect(written.lowerBound <= range.lowerBound, "the provider wrote \(written), which does not cover \(range)")
        let end = min(range.upperBound, item.size)
        guard end > range.lowerBound else { return Data() }
        var out = [UInt8](repeating: 0, count: Int(end - range.lowerBound))
        let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(range.lowerBound)) }
        return Data(out.prefix(max(0, n)))
    }

    /// The content of a small file: a path-dependent pattern, so misplaced bytes show.
    static func content(_ path: String, size: Int) -> Data {
        var rng = SeededRandom(seed: UInt64(truncatingIfNeeded: path.hashValue) | 1)
        var bytes = [UInt8](repeating: 0, count: size)
        for i in 0..<size { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
        return Data(bytes)
    }

    /// Expects `body` to throw a ProviderError of one of `kinds`.
    static func expectError(_ kinds: Set<ProviderError.Kind>, _ what: String,
                            sourceLocation: SourceLocation = #_sourceLocation,
                            _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("\(what): expected \(kinds.map(\.rawValue).sorted()), but it succeeded", sourceLocation: sourceLocation)
        } catch let e as ProviderError {
            if !kinds.contains(e.kind) {
                Issue.record("\(what): expected \(kinds.map(\.rawValue).sorted()), got \(e.kind.rawValue): \(e)", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("\(what): expected a ProviderError, got \(error)", sourceLocation: sourceLocation)
        }
    }

    /// The identifier of a path relative to the remote root ("area/a.txt" → "/area/a.txt").
    static func id(_ path: String) -> ItemIdentifier { ItemIdentifier("/" + path) }
}
