import Foundation

/// What pinning holds and does now, for `favfs status`.
public struct PinStatus: Sendable {
    /// The pinned items as the user pinned them.
    public var pinned: [ItemIdentifier]
    /// Content of pinned files on this machine.
    public var files: Int
    public var bytes: Int64
    /// Background downloads of pinned content: done and queued since they last started.
    public var downloadFilesDone: Int
    public var downloadFilesQueued: Int
    public var downloadBytesDone: Int64
    public var downloadBytesQueued: Int64
    public var downloadFailures: Int
    public var lastError: String?
}
