import Foundation

/// The namespace's side of change detection (`Poller`): which folders are loaded and due, and
/// listing them again.
extension Domain: PollerHost {
    /// The poller over this core's working set and tasks.
    var poller: Poller { Poller(provider: provider, options: options, workingSet: workingSet, tasks: tasks) }

    /// Starts the poller; nil when `pollInterval` is 0. Cancel the task to stop it.
    public func startPolling() -> Task<Void, Never>? { poller.start(host: self) }

    func foldersInUse() -> [ItemIdentifier] {
        handles.all.compactMap { $0.item.identifier.parent } + pinnedWorkingSet()
    }

    func listingFacts(_ folders: [ItemIdentifier]) -> [ItemIdentifier: Poller.ListingFacts] {
        lock.withLock { s in
            var facts: [ItemIdentifier: Poller.ListingFacts] = [:]
            for f in folders where s.refreshes[f] == nil {
                guard let listed = s.namespace[f] else { continue }
                facts[f] = .init(listedAt: listed.listedAt, lastFailure: listed.lastFailure,
                                 entries: listed.items.count, listingSeconds: listed.listingSeconds)
            }
            return facts
        }
    }

    func isLoaded(_ folder: ItemIdentifier) -> Bool { lock.withLock { s in s.namespace[folder] != nil } }

    func refresh(_ folder: ItemIdentifier) async {
        _ = await enumerations.refresh(folder, host: self).result
    }

    func waitForListing(_ folder: ItemIdentifier) async {
        if let inFlight = lock.withLock({ s in s.refreshes[folder] }) { _ = await inFlight.result }
    }

    func remoteAnswered(startedAt: Double) { enumerations.remoteAnswered(startedAt: startedAt) }

    func remoteFailed(_ error: Error, startedAt: Double) { enumerations.remoteFailed(error, startedAt: startedAt) }

    func retryFailedUploads() { writeBack.retryFailedUploads(host: writing) }

    /// A folder is gone at the remote: its placeholders are forgotten, and the kernel is told
    /// if this mount showed it. Unless a file below it changed here and is not uploaded yet:
    /// then the folder stays as it is here (the file where the user put it), and the file's
    /// upload puts the folders back at the remote (`recreateMissingFolders`).
    func folderGone(_ folder: ItemIdentifier) {
        if lock.withLock({ s in s.dirty.hasAny(under: folder) }) {
            log.info("\(folder) is gone at \(provider.remoteDescription) but holds changes not uploaded yet: kept here; their upload makes it again")
            return
        }
        workingSet.forget(folder)
        let shown = lock.withLock { s in folder.parent.flatMap { s.namespace[$0]?[folder.name] } != nil }
        placeholders.forgetSubtree(folder)
        dropPins(folder)
        if shown { remoteChanges.publish([.removed(folder, folder: true)]) }
    }
}
