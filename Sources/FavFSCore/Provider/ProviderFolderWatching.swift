/// A provider that can be told of changes as they happen (the local provider, with inotify),
/// instead of waiting for the poller. The poller still lists watched folders now and then, as
/// a safety net (a watch can overflow or miss a rename across folders).
public protocol FolderWatchingProvider: Provider {
    /// Starts telling `onChange` which watched folder changed (from a thread of its own; it
    /// must return quickly).
    func startWatching(_ onChange: @escaping @Sendable (ItemIdentifier) -> Void)
    /// Watches exactly `folders` from now on (adding and dropping watches as needed).
    func watch(only folders: Set<ItemIdentifier>)
    /// Adds a watch on one folder (when it is listed).
    func watch(_ folder: ItemIdentifier)
}
