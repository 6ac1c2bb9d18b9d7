import Foundation

/// What the content cache knows of one item's cached bytes.
public struct ContentRecord: Sendable, Equatable {
    public var id: ItemIdentifier
    public var file: String
    public var version: String
    public var size: Int64
    public var ranges: ByteRangeSet
    public var lastUsed: Double
    public var pinned: Bool
    public init(id: ItemIdentifier, file: String, version: String, size: Int64, ranges: ByteRangeSet, lastUsed: Double, pinned: Bool) {
        self.id = id; self.file = file; self.version = version; self.size = size
        self.ranges = ranges; self.lastUsed = lastUsed; self.pinned = pinned
    }
}
