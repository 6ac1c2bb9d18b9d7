import FavFSCore

/// The poller's cheap check: a folder's size and mtime (one stat), which change when a name in
/// it is added, removed or renamed — not when a file is rewritten in place.
extension SFTPProvider: FolderStampProvider {
    public func folderStamp(of folder: ItemIdentifier) async throws -> String? {
        try await stat(folder, operation: "stat of a folder").string
    }
}
