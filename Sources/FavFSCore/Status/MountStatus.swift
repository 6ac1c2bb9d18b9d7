import Foundation

/// The mount at a glance, for `favfs status`.
public struct MountStatus: Sendable {
    /// Content that counts against the cache size: pinned content is not in these
    /// (`pinStatus` has it).
    public var cachedFiles: Int
    public var cachedBytes: Int64
    public var cacheLimit: Int64
    public var pendingUploads: Int
    public var pendingBytes: Int64
    public var failedUploads: [ProviderError]
    /// Refused for good; kept in the mount and in lost+found.
    public var refusedUploads: [ProviderError]
    public var lastNetworkError: String?
}
