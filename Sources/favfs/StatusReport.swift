import Foundation
import FavFSCore

/// `favfs status --json`: one mount, as its control server reports it. The field names (in
/// snake_case) are a stable interface for scripts; they are listed in docs/commands.md.
struct MountStatusReport: Codable, Sendable {
    struct Cache: Codable, Sendable {
        var files: Int
        var bytes: Int64
        var limitBytes: Int64
        var directory: String
    }
    struct Uploads: Codable, Sendable {
        var pending: Int
        var pendingBytes: Int64
        /// Uploads that failed and are retried (each error in words).
        var failed: [String]
        /// Files the server refused for good: kept in the mount and in lost+found.
        var refused: [String] = []
    }
    struct LostAndFound: Codable, Sendable {
        var files: Int
        var directory: String
    }

    var mountpoint: String
    var remote: String
    var name: String?
    /// False when the mount's process does not answer (the other fields are then empty).
    var answering: Bool
    var readOnly: Bool
    var cache: Cache?
    var uploads: Uploads?
    var lostAndFound: LostAndFound?
    var lastNetworkError: String?
    /// Uploads and downloads running now, oldest first.
    var transfers: [Transfer]?
    /// What is pinned and how much of it is here.
    var pins: Pins?

    /// What `status --json` prints for a mount whose process is gone.
    static func notAnswering(_ mountpoint: String) -> MountStatusReport {
        MountStatusReport(mountpoint: mountpoint, remote: "", name: nil, answering: false, readOnly: false)
    }
}

extension MountStatusReport {
    /// One upload or download running now (`TransferRegistry`).
    struct Transfer: Codable, Sendable {
        /// The file's path on this machine (in the mount).
        var path: String
        /// `upload` or `download`.
        var direction: String
        /// Upload: bytes sent; download: bytes of the file present in the cache.
        var bytesDone: Int64
        var bytesTotal: Int64
        /// Over the last few seconds.
        var rateBytesPerSecond: Int64
        /// Null while nothing moves.
        var etaSeconds: Int64?

        private enum CodingKeys: String, CodingKey {
            case path, direction, bytesDone, bytesTotal, rateBytesPerSecond, etaSeconds
        }

        init(path: String, direction: String, bytesDone: Int64, bytesTotal: Int64, rateBytesPerSecond: Int64, etaSeconds: Int64?) {
            self.path = path; self.direction = direction; self.bytesDone = bytesDone; self.bytesTotal = bytesTotal
            self.rateBytesPerSecond = rateBytesPerSecond; self.etaSeconds = etaSeconds
        }

        // An unknown ETA is written as null, not left out: every transfer has the same keys.
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(path, forKey: .path)
            try c.encode(direction, forKey: .direction)
            try c.encode(bytesDone, forKey: .bytesDone)
            try c.encode(bytesTotal, forKey: .bytesTotal)
            try c.encode(rateBytesPerSecond, forKey: .rateBytesPerSecond)
            try c.encode(etaSeconds, forKey: .etaSeconds)
        }

        /// "upload  /mnt/a.bin  12.0 MiB of 64.0 MiB (18%), 1.2 MiB/s, 43 s left"
        var line: String {
            let percent = bytesTotal > 0 ? " (\(bytesDone * 100 / bytesTotal)%)" : ""
            let eta = etaSeconds.map { ", \($0) s left" } ?? ""
            return "\(direction)  \(path)  \(ByteSize.format(bytesDone)) of \(ByteSize.format(bytesTotal))\(percent), \(ByteSize.format(rateBytesPerSecond))/s\(eta)"
        }
    }
}

extension MountStatusReport {
    /// Pinned items (`favfs pin`): their content on this machine, outside the cache limit, and
    /// the background downloads that keep it here.
    struct Pins: Codable, Sendable {
        /// The pinned items' paths on this machine, as pinned (a folder covers what is below it).
        var paths: [String]
        var files: Int
        var bytes: Int64
        /// Downloads since they last started: done and queued, and how many failed.
        var downloadFilesDone: Int
        var downloadFilesTotal: Int
        var downloadBytesDone: Int64
        var downloadBytesTotal: Int64
        var downloadFailures: Int
        var lastError: String?

        init(_ s: PinStatus, mountpoint: String) {
            paths = s.pinned.map { (mountpoint == "/" ? "" : mountpoint) + ($0.isRoot ? (mountpoint == "/" ? "/" : "") : $0.rawValue) }
            files = s.files; bytes = s.bytes
            downloadFilesDone = s.downloadFilesDone; downloadFilesTotal = s.downloadFilesQueued
            downloadBytesDone = s.downloadBytesDone; downloadBytesTotal = s.downloadBytesQueued
            downloadFailures = s.downloadFailures; lastError = s.lastError
        }

        /// The lines of `favfs status` (none when nothing is pinned).
        var lines: [String] {
            guard !paths.isEmpty else { return [] }
            var out = ["pinned: \(paths.joined(separator: ", ")) — \(Plural.count(Int(files), "file")), \(ByteSize.format(bytes)) here (not counted in the cache size)"]
            if downloadFilesDone + downloadFailures < downloadFilesTotal {
                out.append("pinned downloads: \(downloadFilesDone) of \(Plural.count(Int(downloadFilesTotal), "file")), \(ByteSize.format(downloadBytesDone)) of \(ByteSize.format(downloadBytesTotal))")
            }
            if downloadFailures > 0, let lastError { out.append("pinned downloads failed: \(downloadFailures) (last: \(lastError))") }
            return out
        }
    }
}

/// The JSON conventions of every `--json` output: snake_case keys, sorted, one document.
enum JSONOutput {
    static func encode<T: Encodable>(_ value: T, pretty: Bool = true) -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    static func decode<T: Decodable>(_ type: T.Type, from text: String) -> T? {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try? decoder.decode(type, from: Data(text.utf8))
    }
}
