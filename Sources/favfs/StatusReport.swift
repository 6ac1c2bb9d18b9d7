import Foundation

/// `favfs status --json`: one mount, as its control server reports it. The field names (in
/// snake_case) are a stable interface for scripts; they are listed in the README.
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

    /// What `status --json` prints for a mount whose process is gone.
    static func notAnswering(_ mountpoint: String) -> MountStatusReport {
        MountStatusReport(mountpoint: mountpoint, remote: "", name: nil, answering: false, readOnly: false)
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
