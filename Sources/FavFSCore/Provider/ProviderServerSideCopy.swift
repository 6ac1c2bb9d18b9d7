/// A provider whose remote copies a file by itself, without the bytes passing through this
/// machine: WebDAV `COPY`, S3 `CopyObject`, a local folder's `copy_file_range` (a reflink where
/// the file system has them). `cp` in the mount becomes one of these (see `Domain.copyRange`).
///
/// Optional: a provider that conforms also declares `.serverSideCopy` in its capabilities.
public protocol ServerSideCopyProvider: WritableProvider {
    /// Copies the file `item` to `destination`, which must not exist: an existing destination
    /// fails with `.exists` and is never replaced. Returns the copy as the remote has it (size,
    /// version). The remote copies the content it has now.
    func copyItem(_ item: Item, to destination: ItemIdentifier) async throws -> Item

    /// The largest file the remote copies in one request (S3's CopyObject: 5 GiB); nil: no limit.
    /// Larger files are copied through this machine.
    var maxServerSideCopySize: Int64? { get }
}

extension ServerSideCopyProvider {
    public var maxServerSideCopySize: Int64? { nil }
}
