/// Names an item at the remote. Path-addressed providers use the item's path below the remote's
/// root: `/` is the root container, `/photos/a.jpg` a file. Components are raw names (never
/// percent-encoded): encoding is the provider's business.
public struct ItemIdentifier: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The root folder of the remote.
    public static let rootContainer = ItemIdentifier("/")

    public var isRoot: Bool { rawValue == "/" }

    /// The path components below the root (empty for the root).
    public var components: [String] {
        rawValue.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    /// The last component; empty for the root.
    public var name: String { isRoot ? "" : String(rawValue[rawValue.index(after: rawValue.lastIndex(of: "/")!)...]) }

    /// The containing folder; nil for the root.
    public var parent: ItemIdentifier? {
        guard !isRoot, let slash = rawValue.lastIndex(of: "/") else { return nil }
        return slash == rawValue.startIndex ? .rootContainer : ItemIdentifier(String(rawValue[..<slash]))
    }

    /// The identifier of the child named `name`, which must be a valid item name.
    public func child(_ name: String) -> ItemIdentifier {
        ItemIdentifier(isRoot ? "/" + name : rawValue + "/" + name)
    }

    /// What the identifier of every item below this one begins with (`/` for the root).
    public var descendantPrefix: String { isRoot ? "/" : rawValue + "/" }

    /// Whether this is `ancestor` or an item below it (anything is at or below the root).
    public func isAtOrBelow(_ ancestor: ItemIdentifier) -> Bool {
        self == ancestor || isBelow(ancestor)
    }

    /// Whether this is an item below `ancestor`, at any depth (not `ancestor` itself).
    public func isBelow(_ ancestor: ItemIdentifier) -> Bool {
        self != ancestor && rawValue.hasPrefix(ancestor.descendantPrefix)
    }

    public var description: String { rawValue }

    public static func < (a: ItemIdentifier, b: ItemIdentifier) -> Bool { a.rawValue < b.rawValue }
}

/// Why a name from a remote cannot be served as a directory entry.
public enum ItemNameProblem: String, Sendable, Equatable {
    case empty = "empty name"
    case dot = "'.' or '..'"
    case slash = "contains '/'"
    case nul = "contains NUL"
    case tooLong = "longer than 255 bytes"
}

extension ItemIdentifier {
    /// Checks that `name` can be one component of a POSIX path. Names that fail are skipped by
    /// enumerators with a warning, never served.
    public static func validate(name: String) -> ItemNameProblem? {
        if name.isEmpty { return .empty }
        if name == "." || name == ".." { return .dot }
        if name.contains("/") { return .slash }
        if name.utf8.contains(0) { return .nul }
        if name.utf8.count > 255 { return .tooLong }
        return nil
    }
}
