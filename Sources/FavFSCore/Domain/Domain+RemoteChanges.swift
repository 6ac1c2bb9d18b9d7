import Foundation

/// Changes found at the remote: applied to the content cache, then handed to whoever listens
/// (the bridge, which tells the kernel).
extension Domain: EnumerationsHost {
    /// Lets go of content the remote no longer has (removed, or replaced by a new version), then
    /// tells the subscriber. Content that is open, dirty or being downloaded stays: an open file
    /// keeps reading what it opened, a dirty one is uploaded (as a conflict copy if need be).
    func applyRemoteChanges(_ changes: [RemoteChange], in state: FolderState) {
        guard !changes.isEmpty else { return }
        // Dirty in memory or in the journal (a journal row not registered yet, at mount): its
        // cache file is the only copy. Unreadable journal: nothing is dropped.
        let journaled = (try? store.journalEntries()).map { Set($0.map(\.id)) }
        let dirtyNow = lock.withLock { s in Set(s.dirty.ids) }.union(journaled ?? [])
        for change in changes where !dirtyNow.contains(change.identifier) && journaled != nil {
            switch change {
            case .removed(let id, _):
                content.remove(id, atTheRemote: true)   // not if open or changed here meanwhile
                dropPins(id)   // gone at the remote: a new item of that name is not pinned
            case .modified(let id):
                if let item = state[id.name], item.kind == .file {
                    content.dropOutdated(id, version: Self.contentVersion(item))
                    providePinned(item)   // pinned content stays up to date
                }
            case .added(let id):
                if let item = state[id.name] { providePinned(item) }   // a pin covers what appears later
            }
        }
        log.info("changes at the remote in \(state.folder): \(changes.map { "\($0)" }.joined(separator: ", "))")
        remoteChanges.publish(changes)
    }
}
