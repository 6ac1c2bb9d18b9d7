import Foundation

/// A modification time kept here for `id` while the remote has `version` of it
/// (`PlaceholderStore+KeptTimes.swift`).
public struct KeptTime: Sendable, Equatable {
    public var id: ItemIdentifier
    public var version: String
    public var time: Timestamp
    public init(id: ItemIdentifier, version: String, time: Timestamp) {
        self.id = id; self.version = version; self.time = time
    }
}
