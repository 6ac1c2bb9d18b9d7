import FavFSCore

/// Changes pushed by Dropbox's long poll (`DropboxChangeFeed`). The feed covers the whole
/// remote, so there are no per-folder watches to keep.
extension DropboxProvider: FolderWatchingProvider {
    public func startWatching(_ onChange: @escaping @Sendable (ItemIdentifier) -> Void) { changeFeed.start(onChange) }
    public func watch(only folders: Set<ItemIdentifier>) {}
    public func watch(_ folder: ItemIdentifier) {}
    public func stopWatching() async { await changeFeed.stop(within: 5) }
    /// Live while the long poll works; while it fails, the poller lists folders every round.
    public var isWatchingLive: Bool { changeFeed.isLive }
}
