import Foundation
import Logging

/// What the poller asks of the namespace it keeps fresh (`Domain`). Passed to each call, as
/// `WriteBackHost` is: a running poll keeps its host alive and the poller holds no reference
/// back (the watch callback holds it weakly).
protocol PollerHost: AnyObject, Sendable {
    /// Folders holding open files, and pinned folders: polled besides the recently used ones.
    func foldersInUse() -> [ItemIdentifier]
    /// What is known of each of `folders` whose listing is loaded and not being listed now.
    func listingFacts(_ folders: [ItemIdentifier]) -> [ItemIdentifier: Poller.ListingFacts]
    /// Whether this mount has `folder`'s listing loaded.
    func isLoaded(_ folder: ItemIdentifier) -> Bool
    /// Lists `folder` again, or joins its listing in flight; applies what changed.
    func refresh(_ folder: ItemIdentifier) async
    /// Waits for the listing of `folder` in flight, if there is one.
    func waitForListing(_ folder: ItemIdentifier) async
    /// `folder` is gone at the remote (its stamp said so).
    func folderGone(_ folder: ItemIdentifier)
    /// A request begun at `startedAt` was answered, or failed (`error`): the remote's reachability.
    func remoteAnswered(startedAt: Double)
    func remoteFailed(_ error: Error, startedAt: Double)
    /// Starts again the uploads that stopped on a transient failure.
    func retryFailedUploads()
}

/// Change detection in the background: every `pollInterval` the folders in use are listed again
/// (or first asked for a cheap stamp), and what changed reaches the placeholders, the content
/// cache and the kernel (the host's listing applies it). "In use" is the working set: folders
/// listed or looked into recently (a file manager showing them), folders holding open files,
/// pinned folders. A value: its state is the working set's; its tasks are the core's.
struct Poller: Sendable {
    let provider: any Provider
    let options: DomainOptions
    let workingSet: WorkingSet
    let tasks: OwnedTasks
    let log = Logger(label: "favfs.domain")

    /// Folders count as in use for this long after they were last listed or looked into.
    static let recentUseWindow: Double = 600
    /// At most this many recently used folders are polled (the most recent ones): a `find` over
    /// a big tree must not turn into a listing of every folder every 15 seconds.
    static let maxRecentFolders = 64
    /// Folders of at least this many entries are polled less often when their listing is slow.
    static let longListing = 1000
    /// Stamp-checked folders are listed in full every this many rounds anyway.
    static let fullListingEvery = 4

    /// What decides whether a loaded folder is due for polling.
    struct ListingFacts: Sendable, Equatable {
        var listedAt: Double?
        var lastFailure: Double?
        var entries: Int
        var listingSeconds: Double
    }

    /// Whether a folder with `facts` is due at `now`: not failed just now, and not listed within
    /// the interval (a user's `ls` just did). A folder whose listing takes long (100,000
    /// entries: seconds) is listed at most 5% of the time — not a short one that was slow once
    /// (a loaded server or machine): that would hold its changes back for 20 times that moment.
    static func isDue(_ facts: ListingFacts, now: Double, options: DomainOptions) -> Bool {
        if let failed = facts.lastFailure, now - failed < options.retryAfterFailure { return false }
        let backOff = facts.entries >= longListing ? facts.listingSeconds * 20 : 0
        return now - (facts.listedAt ?? 0) >= max(options.pollInterval * 0.9, backOff)
    }

    /// Starts the poller; nil when `pollInterval` is 0. Cancel the task to stop it.
    func start(host: any PollerHost) -> Task<Void, Never>? {
        let interval = options.pollInterval
        guard interval > 0 else { return nil }
        (provider as? any FolderWatchingProvider)?.startWatching { [weak host, self] folder in
            if let host { watchedFolderChanged(folder, host: host) }
        }
        return Task.detached(priority: .utility) { [self] in
            var round = 0
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: UInt64(interval * 1_000_000_000))
                if Task.isCancelled { break }
                round += 1
                await poll(round: round, host: host)
            }
        }
    }

    /// The folders to revalidate now, most recently used first.
    func foldersToPoll(now: Double, host: any PollerHost) -> [ItemIdentifier] {
        var set = workingSet.recentFolders(now: now, window: Self.recentUseWindow, limit: Self.maxRecentFolders)
        var seen = Set(set)
        for f in host.foldersInUse() where seen.insert(f).inserted { set.append(f) }
        return set
    }

    /// One round: each folder of the working set that was not listed within the last interval
    /// is checked, four at a time.
    func poll(round: Int, host: any PollerHost) async {
        host.retryFailedUploads()
        let now = Date().timeIntervalSince1970
        let candidates = foldersToPoll(now: now, host: host)
        if let watching = provider as? any FolderWatchingProvider {
            watching.watch(only: Set(candidates))
            // Watched folders report their changes; listing them is only the safety net
            // (unless the watch is down: then the poller is all there is).
            if watching.isWatchingLive && round % Self.fullListingEvery != 0 { return }
        }
        // Only folders this mount has loaded: never one it would have to load to check.
        let facts = host.listingFacts(candidates)
        let due = candidates.filter { f in facts[f].map { Self.isDue($0, now: now, options: options) } ?? false }
        guard !due.isEmpty else { return }
        await withTaskGroup(of: Void.self) { group in
            var next = due.makeIterator()
            for _ in 0..<4 { if let f = next.next() { group.addTask { await revalidate(f, round: round, host: host) } } }
            while await group.next() != nil {
                if let f = next.next() { group.addTask { await revalidate(f, round: round, host: host) } }
            }
        }
    }

    /// Revalidates one folder: its stamp first where the provider has one, then the listing.
    func revalidate(_ folder: ItemIdentifier, round: Int, host: any PollerHost) async {
        if let stamped = provider as? any FolderStampProvider, round % Self.fullListingEvery != 0 {
            let started = ReachabilityTracker.clock
            do {
                let stamp = try await stamped.folderStamp(of: folder)
                host.remoteAnswered(startedAt: started)
                if let stamp, workingSet.stampUnchanged(folder, stamp) { return }
            } catch let e as ProviderError where e.kind == .notFound {
                host.remoteAnswered(startedAt: started)
                host.folderGone(folder)
                return
            } catch {
                log.debug("poll: stamp of \(folder): \(error)")
                host.remoteFailed(error, startedAt: started)
                return
            }
        }
        // A folder gone at the remote is handled by the refresh itself (`folderGone`).
        await host.refresh(folder)
    }

    /// A watched folder changed: list it shortly (events come in bursts: one listing for a
    /// burst), after any listing in flight, which may have missed the change.
    func watchedFolderChanged(_ folder: ItemIdentifier, host: any PollerHost) {
        guard workingSet.scheduleWatchedListing(folder) else { return }
        tasks.start(priority: .utility) { [self] in
            try? await Task.sleep(nanoseconds: 300_000_000)
            if Task.isCancelled { return }
            await host.waitForListing(folder)
            workingSet.watchedListingStarts(folder)
            guard host.isLoaded(folder) else { return }
            await host.refresh(folder)
        }
    }
}
