import Foundation

/// A dirty item: its local content (the cache file) is newer than the remote's.
public struct JournalEntry: Sendable, Equatable {
    public var id: ItemIdentifier
    /// The remote version the local content was based on; nil for a file created here.
    public var baseVersion: String?
    /// Created here and never uploaded.
    public var isNew: Bool
    public var since: Double
    public var attempts: Int
    public var lastError: String?
    /// The server refused this content for good (`ProviderError.Kind` raw value): kept here,
    /// not uploaded again until it changes.
    public var refused: String?
    /// What attempts whose answer was lost sent (read here; written by `saveLostReplies`,
    /// never by `saveJournal`).
    public var lostReplies: [SentContent] = []
    public init(id: ItemIdentifier, baseVersion: String?, isNew: Bool, since: Double, attempts: Int = 0,
                lastError: String? = nil, refused: String? = nil) {
        self.id = id; self.baseVersion = baseVersion; self.isNew = isNew; self.since = since
        self.attempts = attempts; self.lastError = lastError; self.refused = refused
    }
}

/// Content an upload sent: its length and SHA-256.
public struct SentContent: Sendable, Equatable, Codable {
    public let length: Int64
    public let digest: [UInt8]
    public init(length: Int64, digest: [UInt8]) { self.length = length; self.digest = digest }

    /// The column's text: a JSON array (nil: none).
    static func text(_ list: [SentContent]) -> String? {
        (try? JSONEncoder().encode(list)).flatMap { String(data: $0, encoding: .utf8) }
    }

    static func list(_ text: String?) -> [SentContent] {
        text.flatMap { try? JSONDecoder().decode([SentContent].self, from: Data($0.utf8)) } ?? []
    }
}
