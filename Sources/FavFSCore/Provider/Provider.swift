/// What a provider can do beyond listing and reading. Operations a provider lacks are answered
/// by the bridge with the right errno, never with a silent no-op.
public struct ProviderCapabilities: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let write = ProviderCapabilities(rawValue: 1 << 0)
    public static let rename = ProviderCapabilities(rawValue: 1 << 1)
    public static let delete = ProviderCapabilities(rawValue: 1 << 2)
    public static let createFolder = ProviderCapabilities(rawValue: 1 << 3)
    public static let symlinks = ProviderCapabilities(rawValue: 1 << 4)
    public static let quota = ProviderCapabilities(rawValue: 1 << 5)
    public static let rangedReads = ProviderCapabilities(rawValue: 1 << 6)
    public static let versions = ProviderCapabilities(rawValue: 1 << 7)
    /// The remote makes preview images (`ThumbnailProvider`).
    public static let thumbnails = ProviderCapabilities(rawValue: 1 << 8)
    /// The remote copies a file by itself (`ServerSideCopyProvider`): `cp` in the mount sends no bytes.
    public static let serverSideCopy = ProviderCapabilities(rawValue: 1 << 9)
    /// A read that stops before the end of the file costs the connection (FTP: libcurl aborts
    /// the transfer and closes it; the next read logs in again): the content cache reads a
    /// file of a few MiB to its end in one request (`Downloads.readToTheEndBelow`).
    public static let partialReadsCostAConnection = ProviderCapabilities(rawValue: 1 << 10)
    /// Listings may leave out names that start with a dot (nginx's WebDAV module), though the
    /// item itself answers when asked: the core asks for such a name before calling it absent,
    /// and checks the ones it knows at each listing.
    public static let listingsMayLeaveOutDotNames = ProviderCapabilities(rawValue: 1 << 11)
    /// Each new connection logs in anew at a cost above waiting for one in use (FTP: the
    /// server hashes the password at each login): background fetches that can wait share a
    /// connection (a walk's read-ahead fetches one file at a time).
    public static let connectionsCostALogin = ProviderCapabilities(rawValue: 1 << 12)
}

/// An opaque continuation token for listing a folder in pages (e.g. S3's ContinuationToken).
public struct Page: Sendable, Hashable {
    public let token: String
    public init(_ token: String) { self.token = token }
}

/// One page of a folder listing.
public struct EnumerationPage: Sendable {
    /// The folder's children on this page. Names are valid (see `ItemIdentifier.validate`).
    public var items: [Item]
    /// The next page, or nil when this was the last.
    public var nextPage: Page?
    /// Entries the remote listed but that cannot be served, with the reason (already logged).
    public var skipped: [(name: String, problem: ItemNameProblem)]

    public init(items: [Item], nextPage: Page? = nil, skipped: [(name: String, problem: ItemNameProblem)] = []) {
        self.items = items
        self.nextPage = nextPage
        self.skipped = skipped
    }
}

/// Space at the remote, where it says.
public struct Quota: Sendable, Equatable {
    public var usedBytes: Int64?
    public var availableBytes: Int64?
    /// The whole file system and its free space, where the remote says (statvfs: blocks
    /// reserved for root are free but not available); nil: used + available.
    public var totalBytes: Int64?
    public var freeBytes: Int64?
    public init(usedBytes: Int64?, availableBytes: Int64?, totalBytes: Int64? = nil, freeBytes: Int64? = nil) {
        self.usedBytes = usedBytes
        self.availableBytes = availableBytes
        self.totalBytes = totalBytes
        self.freeBytes = freeBytes
    }
}

/// Where a ranged read puts its bytes: a file descriptor (the content cache file), written with
/// `pwrite` at the byte's own offset in the item. Nothing goes through Swift arrays.
public struct ContentSink: Sendable {
    public let fd: Int32
    /// Told, as bytes land, the range written so far (one contiguous range from the first byte),
    /// so a reader waits only for its own bytes, not for the whole request. A provider passes it
    /// on only when the bytes are known to be of `item.version` as they arrive (pinned by
    /// If-Match, or checked before the transfer); otherwise it leaves it unused.
    public let progress: (@Sendable (Range<Int64>) -> Void)?
    public init(fd: Int32, progress: (@Sendable (Range<Int64>) -> Void)? = nil) { self.fd = fd; self.progress = progress }
}

/// The one protocol every provider conforms to. Path-addressed: identifiers are paths below the
/// remote's root. Providers throw `ProviderError` only, with remote and path filled in.
public protocol Provider: Sendable {
    /// The remote for messages and logs, never with credentials.
    var remoteDescription: String { get }
    var capabilities: ProviderCapabilities { get }

    /// Lists one page of a folder's children.
    func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage

    /// Fetches one item's metadata.
    func item(for identifier: ItemIdentifier) async throws -> Item

    /// Reads `range` of `item`'s content into `sink` at the same offsets. When `item.version` is
    /// set the read is pinned to it: a remote change gives `.versionChanged`, never mixed bytes.
    /// Returns the range actually written: a server that ignores ranges sends the whole content,
    /// which is written (from offset 0) and reported as such.
    func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64>

    /// Space used and available, where the remote says; nil when it does not.
    func quota() async throws -> Quota?
}

extension Provider {
    public func quota() async throws -> Quota? { nil }

    /// Lists every page of a folder.
    public func enumerateAll(in folder: ItemIdentifier) async throws -> [Item] {
        var items: [Item] = []
        var page: Page? = nil
        repeat {
            let p = try await enumerateItems(in: folder, page: page)
            // The first page is taken as it is: appended to an empty array it was copied, and
            // a listing of a million entries held twice (about 90 MB each).
            if items.isEmpty { items = p.items } else { items += p.items }
            page = p.nextPage
        } while page != nil
        return items
    }
}
