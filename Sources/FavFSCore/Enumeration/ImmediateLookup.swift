import Foundation

/// What a lookup finds in a folder whose verified listing is in memory.
public enum ImmediateLookup: Sendable {
    case found(Item)
    case absent
}
