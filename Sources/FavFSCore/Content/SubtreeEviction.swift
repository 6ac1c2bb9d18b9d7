import Foundation
import Logging

/// Free up space (File Provider's `evictItem`, OneDrive's "Free up space"): the cached content
/// of a file, or of everything below a folder, goes; the placeholders stay, so the names, sizes
/// and times still show and a later read downloads again. What is the only copy (dirty) or in
/// use stays, and the report says why (`EvictionReport`).
///
/// `favfs evict`: frees the content of an item and of everything below it, through the
/// content cache's own eviction (`evictUnlessDirty`); pins there go first.
final class SubtreeEviction: Sendable, ReportsRemoteErrors {
    let provider: any Provider
    let store: PlaceholderStore
    let content: ContentCache
    let pinning: Pinning
    let log = Logger(label: "favfs.domain")

    init(provider: any Provider, store: PlaceholderStore, content: ContentCache, pinning: Pinning) {
        self.provider = provider
        self.store = store
        self.content = content
        self.pinning = pinning
    }

    /// Seconds `evict` waits for background downloads of what it frees to end.
    static let evictWaitsForDownloads: Double = 5

    /// Drops the cached content of `id` and of everything below it; placeholders stay. Pins at
    /// or below it are removed first; an item pinned through a folder above it is refused (the
    /// pin would download it again at once).
    func evict(_ id: ItemIdentifier) async throws -> EvictionReport {
        var report = EvictionReport()
        report.unpinned = try pinning.unpinToFreeSpace(id)
        // Content a background download holds (read-ahead, a pin's pass) is freed once it ends,
        // within a few seconds; content open in a program stays. A file read a moment ago may
        // not be recorded yet (its record is written off the read's path): waited for first.
        let deadline = Date().addingTimeInterval(Self.evictWaitsForDownloads)
        while content.isSettling(atOrBelow: id) && Date() < deadline {
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        let records: [ContentRecord]
        do { records = try store.contentRecords(atOrBelow: id) }
        catch { throw self.error(.localIO, id, "cannot read the cache index: \(error)") }
        var pending = records
        while !pending.isEmpty {
            var downloading: [ContentRecord] = []
            for r in pending {
                switch content.evictUnlessDirty(r) {
                case .evicted:
                    report.files += 1
                    report.bytes += r.ranges.count
                case .open:
                    report.kept.append(.init(id: r.id, reason: "open"))
                case .downloading:
                    downloading.append(r)
                case .notUploaded:
                    report.kept.append(.init(id: r.id, reason: "changed here and not uploaded yet: this is its only copy"))
                case .alreadyGoing:
                    break   // another pass frees it
                }
            }
            pending = downloading
            if pending.isEmpty { break }
            if Date() >= deadline {
                report.kept += pending.map { .init(id: $0.id, reason: "being downloaded") }
                break
            }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        report.kept.sort { $0.id.rawValue < $1.id.rawValue }
        log.info("freed up space at \(id): \(report.files) cached files, \(report.bytes) bytes; \(report.kept.count) kept")
        return report
    }
}
