/// Tunables of one mounted remote.
public struct DomainOptions: Sendable {
    /// A folder listing is served without asking the remote for this long; after it, it is still
    /// served while a background enumeration revalidates it.
    public var dirCacheTime: Double = 60
    /// Seconds between background checks of the folders in use for changes at the remote
    /// (`Domain.startPolling`, `Poller`); 0 turns the poller off.
    public var pollInterval: Double = 15
    /// Bytes of content kept on disk at most (LRU eviction beyond).
    public var cacheLimit: Int64 = 10 << 30
    /// The read-ahead window of a sequential reader starts at this and quadruples with each
    /// sequential read, up to `maxReadAhead` (fetched as parallel requests of the cache's request
    /// size). Small, so a program that only sniffs a file's first bytes (a file manager finding
    /// MIME types) costs about a chunk and this, not megabytes; a reader that goes on reaches
    /// 8 MiB at its fourth read and the maximum at its fifth.
    public var minReadAhead: Int64 = 128 << 10
    public var maxReadAhead: Int64 = 32 << 20
    /// Listing a folder also lists up to this many of its never-listed subfolders in the
    /// background (`find` and file managers descend next), this many at a time.
    public var prefetchSubfolders = 32
    public var prefetchConcurrency = 4
    /// Background listings of subfolders start this long after the readdir that calls for
    /// them, and each only once files have been neither opened nor read for
    /// `prefetchQuietTime`: reading comes first.
    public var prefetchDelay: Double = 0.15
    public var prefetchQuietTime: Double = 0.3
    /// After a failed background revalidation, wait this long before trying that folder again.
    public var retryAfterFailure: Double = 5
    /// Refuse every change (EROFS), even where the provider could write.
    public var readOnly = false
    /// Uploads retried on transient errors back off up to this many seconds between attempts.
    public var maxUploadBackoff: Double = 30
    /// Attempts of one upload on transient errors before it stops until the next poll, change
    /// or mount (its failure shows in status); fewer while unmounting, which waits for them.
    public var maxUploadAttempts = 10
    public var maxUploadAttemptsWhileUnmounting = 3
    /// fsync waits until the remote confirmed the content (`--fsync remote`); otherwise it
    /// returns once the content and its journal row are on this machine's disk, and the upload
    /// follows when the file has gone quiet.
    public var fsyncWaitsForRemote = false
    /// After the last close of a changed file, its upload starts this many seconds later: long
    /// enough for a program's next call (an unlink, a rename) to come first, short enough that
    /// nobody waits for it.
    public var uploadCloseGrace: Double = 0.02
    /// After a local fsync, the upload starts once the file went this many seconds without a
    /// change (many fsyncs in a row, as a database makes, become one upload)...
    public var uploadQuietTime: Double = 1
    /// ...or once it has waited this long, for a file that never goes quiet.
    public var uploadMaxDelay: Double = 30
    public init() {}
}

/// The outcome of a read: `length` bytes of the cache file `fd` at `offset` (the item's own offset).
public struct ReadResult: Sendable {
    public let fd: Int32
    public let offset: Int64
    public let length: Int
    /// Called once the reply has been sent from `fd` (the bytes may be dropped after it).
    public let done: (@Sendable () -> Void)?
    /// The content version the handle moved to, when it is of a newer, larger file than the
    /// kernel was told of: the kernel must ask for the attributes again before this reply, or,
    /// stopping at the size it knows, it cuts the read short.
    public let grewToVersion: String?

    public init(fd: Int32, offset: Int64, length: Int, done: (@Sendable () -> Void)? = nil, grewToVersion: String? = nil) {
        self.fd = fd; self.offset = offset; self.length = length; self.done = done
        self.grewToVersion = grewToVersion
    }
}
