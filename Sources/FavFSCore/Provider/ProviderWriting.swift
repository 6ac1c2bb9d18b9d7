/// What an upload may replace, checked by the remote atomically with the write.
public enum UploadPrecondition: Sendable, Equatable {
    /// Create only: fails with `.exists` if the item is there (`If-None-Match: *`).
    case mustNotExist
    /// Replace only this version: fails with `.versionChanged` otherwise (`If-Match`).
    case mustMatch(String)
    /// No version is known (a provider without versions): replace whatever is there.
    case none
}

/// Content to upload: `length` bytes of `fd` from offset 0 (the cache file). Providers stream
/// from it; nothing is loaded into memory whole.
public struct ContentSource: Sendable {
    public let fd: Int32
    public let length: Int64
    public init(fd: Int32, length: Int64) { self.fd = fd; self.length = length }
}

/// The write side of a provider. Each call is one remote operation; a provider that cannot do
/// one throws `.notSupported` (the defaults below), never pretends.
public protocol WritableProvider: Provider {
    /// The largest file the remote stores, if it has a limit: writes past it fail with `EFBIG`
    /// at once, not in an upload after the program closed the file.
    var maxFileSize: Int64? { get }
    /// Why the remote could not keep an item of `kind` at `id` (a name it would never list),
    /// or nil: asked before a file is created here, so no write is acknowledged that could
    /// never be uploaded.
    func storageProblem(_ id: ItemIdentifier, kind: ItemKind) -> ProviderError?
    /// Creates or replaces a file's content; returns the item as the remote now has it (new version).
    func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item
    /// Creates one folder (its parent exists).
    func createFolder(_ id: ItemIdentifier) async throws -> Item
    /// Deletes a file, a symlink or an empty folder; a folder with children fails with `.notEmpty`.
    func delete(_ item: Item) async throws
    /// Moves an item; `replacing` allows an existing destination file to be overwritten.
    func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item
    /// Sets a file's modification time, where the remote keeps one it is told (truncated to
    /// what the protocol keeps).
    func setModified(_ id: ItemIdentifier, to time: Timestamp) async throws -> Item
    /// As `setModified(_:to:)`, for a file the caller has just had from the remote (an
    /// upload's answer): a remote that binds the time to the file's version takes the version
    /// from `current` instead of asking for it again.
    func setModified(_ id: ItemIdentifier, to time: Timestamp, current: Item) async throws -> Item
    /// Creates a symbolic link.
    func createSymlink(_ id: ItemIdentifier, target: String) async throws -> Item
}

extension WritableProvider {
    public var maxFileSize: Int64? { nil }
    public func storageProblem(_ id: ItemIdentifier, kind: ItemKind) -> ProviderError? { nil }
    public func setModified(_ id: ItemIdentifier, to time: Timestamp) async throws -> Item {
        throw ProviderError(.notSupported, remote: remoteDescription, path: id.rawValue, detail: "this remote does not keep modification times it is given")
    }
    public func setModified(_ id: ItemIdentifier, to time: Timestamp, current: Item) async throws -> Item {
        try await setModified(id, to: time)
    }
    public func createSymlink(_ id: ItemIdentifier, target: String) async throws -> Item {
        throw ProviderError(.notSupported, remote: remoteDescription, path: id.rawValue, detail: "this remote has no symbolic links")
    }
}
