import Foundation

/// Pre-authenticated download URLs got from `content`'s redirect, kept for a minute per path
/// and version: a file read in many ranges costs one redirect, not one per range. Graph says
/// such URLs last a few minutes; one that fails is forgotten and asked for again.
final class OneDriveDownloadURLs: @unchecked Sendable {
    /// Seconds a URL is reused.
    static let lifetime: Double = 60
    /// At most this many are kept (the oldest go first).
    static let capacity = 256
    private let lock = NSLock()
    // Guarded by `lock`.
    private var urls: [String: (url: String, expires: Date)] = [:]

    private static func key(_ path: String, _ version: String) -> String { path + "\n" + version }

    /// The URL for this version of the file at `path`, if one is fresh.
    func url(_ path: String, version: String) -> String? {
        lock.withLock {
            guard let entry = urls[Self.key(path, version)], entry.expires > Date() else { return nil }
            return entry.url
        }
    }

    func keep(_ url: String, for path: String, version: String) {
        lock.withLock {
            if urls.count >= Self.capacity {
                let now = Date()
                urls = urls.filter { $0.value.expires > now }
                if urls.count >= Self.capacity, let oldest = urls.min(by: { $0.value.expires < $1.value.expires })?.key {
                    urls[oldest] = nil
                }
            }
            urls[Self.key(path, version)] = (url, Date().addingTimeInterval(Self.lifetime))
        }
    }

    func forget(_ path: String, version: String) {
        lock.withLock { urls[Self.key(path, version)] = nil }
    }
}
