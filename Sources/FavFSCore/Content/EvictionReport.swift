import Foundation

/// What `evict` freed, what it unpinned and what it kept.
public struct EvictionReport: Sendable, Equatable {
    public var files = 0
    public var bytes: Int64 = 0
    /// Pins at or below the item, removed first (pinned content would be fetched again).
    public var unpinned: [ItemIdentifier] = []
    /// Items whose content stays, with why.
    public var kept: [Kept] = []

    public struct Kept: Sendable, Equatable {
        public var id: ItemIdentifier
        public var reason: String
    }
}
