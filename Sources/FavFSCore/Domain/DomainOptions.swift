/// Tunables of one mounted remote.
public struct DomainOptions: Sendable {
    /// A folder listing is served without asking the remote for this long; after it, it is still
    /// served while a background enumeration revalidates it.
    public var dirCacheTime: Double = 60
    /// Bytes of content kept on disk at most (LRU eviction beyond).
    public var cacheLimit: Int64 = 10 << 30
    /// The read-ahead window of a sequential reader grows up to this.
    public var maxReadAhead: Int64 = 64 << 20
    /// After a failed background revalidation, wait this long before trying that folder again.
    public var retryAfterFailure: Double = 5
    /// Refuse every change (EROFS), even where the provider could write.
    public var readOnly = false
    /// Uploads retried on transient errors back off up to this many seconds between attempts.
    public var maxUploadBackoff: Double = 30
    public init() {}
}

/// The outcome of a read: `length` bytes of the cache file `fd` at `offset` (the item's own offset).
public struct ReadResult: Sendable {
    public let fd: Int32
    public let offset: Int64
    public let length: Int
}
