/// A provider that can be told of changes as they happen (the local provider with inotify, a
/// cloud provider with the service's change feed), instead of waiting for the poller. The
/// poller still lists watched folders now and then, as a safety net (a watch can overflow or
/// miss a rename across folders; a change feed can be reset).
public protocol FolderWatchingProvider: Provider {
    /// Starts telling `onChange` which folder changed (from a thread or task of its own; it
    /// must return quickly).
    func startWatching(_ onChange: @escaping @Sendable (ItemIdentifier) -> Void)
    /// Watches exactly `folders` from now on (adding and dropping watches as needed). A
    /// provider whose feed covers the whole remote ignores it.
    func watch(only folders: Set<ItemIdentifier>)
    /// Adds a watch on one folder (when it is listed).
    func watch(_ folder: ItemIdentifier)
    /// Stops watching: the work started by `startWatching` is cancelled (a pending long poll
    /// too) and awaited for a few seconds at most, so that nothing of it runs on behind the
    /// unmount and the unmount never waits for a long poll. Called once, at the domain's shutdown.
    func stopWatching() async
    /// True while changes are being reported. The poller lists watched folders only every
    /// fourth round then; while false (a feed that keeps failing) it lists them every round.
    var isWatchingLive: Bool { get }
}

extension FolderWatchingProvider {
    /// Nothing to stop by default (a watcher whose thread ends with the process).
    public func stopWatching() async {}
    /// Live by default (inotify, once started, does not fail by itself).
    public var isWatchingLive: Bool { true }
}
