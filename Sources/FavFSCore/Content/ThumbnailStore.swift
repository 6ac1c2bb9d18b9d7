import Foundation
import Logging

/// Previews fetched from a `ThumbnailProvider`, kept on local disk so that the next request for
/// the same item at the same version costs no network.
///
/// One file per preview: `<cacheDir>/thumbnails/<sha256 of path and version>.jpg`. The key holds
/// the version, so a changed file gets a new preview and an old one is never served for it.
/// The folder is separate from the content cache: `favfs unmount` evicts content, not previews
/// (they are small and cost a round trip each to make again).
///
/// Previews of versions that are gone are not cleaned up here; `removeAll()` empties the folder.
public final class ThumbnailStore: Sendable {
    /// `<cacheDir>/thumbnails`.
    public let directory: URL
    private let log = Logger(label: "favfs.thumbnails")

    /// A store under `cacheDirectory`; creates `thumbnails/` there.
    public init(cacheDirectory: URL) throws {
        directory = cacheDirectory.appendingPathComponent("thumbnails", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The preview of `item`: from disk when one is kept for its path and version, else fetched
    /// from `provider` and kept. Failing to keep it (disk full) is logged, not thrown: the
    /// caller still gets the preview.
    public func thumbnail(for item: Item, from provider: any ThumbnailProvider) async throws -> Data {
        if let kept = cached(item) { return kept }
        let data = try await provider.thumbnail(for: item)
        do {
            // Atomic (a temp file renamed): a reader never sees half a preview.
            try data.write(to: fileURL(for: item), options: .atomic)
        } catch {
            log.warning("cannot keep the preview of \(item.identifier): \(error)")
        }
        return data
    }

    /// The kept preview of `item` at its version, or nil (no network).
    public func cached(_ item: Item) -> Data? {
        try? Data(contentsOf: fileURL(for: item))
    }

    /// Where the preview of `item` at its version is (or would be) kept.
    public func fileURL(for item: Item) -> URL {
        directory.appendingPathComponent(Self.key(for: item) + ".jpg")
    }

    /// Deletes every kept preview.
    public func removeAll() throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    /// SHA-256 of the path and the version, NUL-separated (neither contains NUL). An item
    /// without a version is keyed by size and mtime, like its cached content.
    static func key(for item: Item) -> String {
        let version = item.version ?? "size=\(item.size) mtime=\(item.modified ?? 0)"
        return SHA256.hex(Array(item.identifier.rawValue.utf8) + [0] + Array(version.utf8))
    }
}
