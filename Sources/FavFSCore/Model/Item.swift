import Foundation

/// What an item is.
public enum ItemKind: String, Sendable, Codable, Equatable {
    case file, folder, symlink
}

/// An item's metadata as the remote reported it: what a placeholder keeps.
public struct Item: Sendable, Equatable {
    public var identifier: ItemIdentifier
    public var kind: ItemKind
    /// Content length in bytes (0 for folders).
    public var size: Int64
    /// Last modification, to the nanosecond where the remote keeps that; nil when it does not say.
    public var modifiedTime: Timestamp?
    /// `modifiedTime` as seconds since 1970 (a `Double`: microseconds at best).
    public var modified: Double? {
        get { modifiedTime?.timeInterval }
        set { modifiedTime = newValue.map { Timestamp($0) } }
    }
    /// The remote's version of the content (an ETag, verbatim); nil when the remote has none.
    /// Content cached for one version is never served for another.
    public var version: String?
    /// `version` as content is compared: an HTTP weak validator's `W/` is dropped (weak
    /// comparison, RFC 9110 §8.8.3.2). Apache tags a file changed within the last second weakly
    /// and the same file strongly a second later: one version, not two.
    public var contentTag: String? {
        guard let version else { return nil }
        return version.hasPrefix("W/") ? String(version.dropFirst(2)) : version
    }
    /// POSIX permission bits where the provider has them (SFTP, local); nil otherwise.
    public var permissions: UInt16?
    /// The target of a symlink.
    public var symlinkTarget: String?

    public init(identifier: ItemIdentifier, kind: ItemKind, size: Int64 = 0, modified: Double? = nil,
                modifiedTime: Timestamp? = nil,
                version: String? = nil, permissions: UInt16? = nil, symlinkTarget: String? = nil) {
        self.identifier = identifier
        self.kind = kind
        self.size = size
        self.modifiedTime = modifiedTime ?? modified.map { Timestamp($0) }
        self.version = version
        self.permissions = permissions
        self.symlinkTarget = symlinkTarget
    }

    public var name: String { identifier.name }
    public var parent: ItemIdentifier? { identifier.parent }
    public var isFolder: Bool { kind == .folder }
}
