import Foundation

/// Changes made through the mount, as the bridge asks for them: content changes are
/// `Writing`'s, namespace changes `NamespaceChanges`', server-side copies `ServerSideCopy`'s.
extension Domain {
    /// Whether this mount takes changes (not `--read-only`, a provider that writes).
    public var isWritable: Bool { writing.isWritable }

    // MARK: files

    /// Creates a file (or opens an existing one truncated, unless `exclusive`).
    public func create(_ parent: ItemIdentifier, _ name: String, exclusive: Bool) async throws -> (item: Item, handle: UInt64) {
        try await writing.create(parent, name, exclusive: exclusive, host: self)
    }

    /// Opens a file; for writing, its whole content is made present first (it will be
    /// uploaded whole), unless truncated to zero.
    public func openFile(_ id: ItemIdentifier, write: Bool, truncate: Bool) async throws -> (handle: UInt64, keepCache: Bool) {
        try await writing.openFile(id, write: write, truncate: truncate)
    }

    /// Writes through a writable handle into the cache file. Local disk only, no network.
    public func write(handle: UInt64, offset: Int64, _ buffer: UnsafeRawBufferPointer) throws -> Int {
        try writing.write(handle: handle, offset: offset, buffer)
    }

    /// Truncates or extends a file (setattr size), through `handle` when given.
    public func setSize(_ id: ItemIdentifier, _ size: Int64, handle: UInt64?) async throws -> Item {
        try await writing.setSize(id, size, handle: handle)
    }

    /// Sets a file's modification time where the remote keeps it; elsewhere it is kept in the
    /// placeholder until the next listing (see docs/behaviour.md).
    public func setModified(_ id: ItemIdentifier, _ time: Timestamp) async throws -> Item {
        try await writing.setModified(id, time)
    }

    /// fsync: the cache file and its journal row on this machine's disk; the upload follows
    /// once the file goes quiet. With `fsyncWaitsForRemote`, once the remote confirmed it.
    public func sync(handle: UInt64) async throws { try await writing.sync(handle: handle) }

    /// fsync of a folder: the changes made here to the entries of folders, on this machine's
    /// disk (`Writing.syncFolder`).
    public func syncFolder() async throws { try await writing.syncFolder() }

    // MARK: answered on the FUSE thread

    /// `lookup`, when the folder's verified listing is in memory (an absence is then known);
    /// nil means "ask `lookup`". Neither the network nor a database read: the bridge answers
    /// on the FUSE thread, without a task to start and a thread to switch to.
    public func lookupImmediately(_ parent: ItemIdentifier, _ name: String) -> ImmediateLookup? {
        enumerations.lookupImmediately(parent, name, host: self)
    }

    /// `create` of a name known to be absent: all local. Nil when the name exists or is not known.
    public func createImmediately(_ parent: ItemIdentifier, _ name: String) throws -> (item: Item, handle: UInt64)? {
        try writing.createImmediately(parent, name, host: self)
    }

    /// `setModified` of a dirty item (or one deleted while open), which sends nothing now.
    /// Nil for any other item (then call `setModified`).
    public func setModifiedImmediately(_ id: ItemIdentifier, _ time: Timestamp) throws -> Item? {
        try writing.setModifiedImmediately(id, time)
    }

    // MARK: server-side copies

    /// `copy_file_range`: a whole-file copy into a file just created here is made at the
    /// remote (`ServerSideCopy.copyRange`); anything else falls back to reads and writes.
    public func copyRange(from sourceHandle: UInt64, offset offsetIn: Int64, to destinationHandle: UInt64,
                          offset offsetOut: Int64, length: Int64) async throws -> CopyOutcome {
        try await serverSideCopy.copyRange(from: sourceHandle, offset: offsetIn, to: destinationHandle,
                                           offset: offsetOut, length: length)
    }

    /// True when `handle` is a file made by a server-side copy, whose content must come here
    /// (`prepareForWriting`) before a write through it. No network.
    public func needsContentBeforeWriting(handle: UInt64) -> Bool { writing.needsContentBeforeWriting(handle: handle) }

    /// Fetches the content of a file made by a server-side copy, so writes through `handle` change it.
    public func prepareForWriting(handle: UInt64) async throws { try await writing.prepareForWriting(handle: handle) }

    // MARK: namespace

    public func makeFolder(_ parent: ItemIdentifier, _ name: String) async throws -> Item {
        try await namespaceChanges.makeFolder(parent, name, host: self)
    }

    public func makeSymlink(_ parent: ItemIdentifier, _ name: String, target: String) async throws -> Item {
        try await namespaceChanges.makeSymlink(parent, name, target: target, host: self)
    }

    /// Deletes a file or symlink (a file never sent is only dropped here).
    public func remove(_ parent: ItemIdentifier, _ name: String) async throws {
        try await namespaceChanges.remove(parent, name, host: self)
    }

    /// Deletes an empty folder (emptiness checked against a fresh listing).
    public func removeFolder(_ parent: ItemIdentifier, _ name: String) async throws {
        try await namespaceChanges.removeFolder(parent, name, host: self)
    }

    /// Renames or moves an item, replacing a destination file (or empty folder) unless
    /// `noReplace`. Pending uploads at and below the source finish first.
    public func rename(_ parent: ItemIdentifier, _ name: String, to newParent: ItemIdentifier, _ newName: String,
                       noReplace: Bool) async throws -> (from: ItemIdentifier, to: ItemIdentifier) {
        try await namespaceChanges.rename(parent, name, to: newParent, newName, noReplace: noReplace, host: self)
    }
}
