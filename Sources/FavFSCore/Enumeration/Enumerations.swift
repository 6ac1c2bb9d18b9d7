import Foundation
import Logging

/// What a listing's outcome asks of the rest of the core, passed to each call that may start
/// one (as `PinningHost` and `WriteBackHost` are), so this part holds no reference back.
protocol EnumerationsHost: AnyObject, Sendable {
    /// A listing found these changes at the remote, against what this mount showed before:
    /// content and pins follow them, then whoever listens is told.
    func applyRemoteChanges(_ changes: [RemoteChange], in state: FolderState)
    /// A listing found `folder` gone at the remote.
    func folderGone(_ folder: ItemIdentifier)
}

/// The enumerators: a folder's listing is served from its placeholders when there are any
/// (revalidated in the background once older than `dirCacheTime`) and fetched from the remote
/// otherwise; one enumeration per folder at a time, shared by everyone waiting for it and
/// owned by the core's tasks. A listing is merged with what was changed here meanwhile
/// and its placeholders saved off the waiting `readdir`'s path (`+Listing`).
/// Whether the remote answers (`reachability`) goes by the outcomes of these requests.
final class Enumerations: Sendable, ReportsRemoteErrors {
    let provider: any Provider
    let options: DomainOptions
    let placeholders: Placeholders
    let tasks: OwnedTasks
    let workingSet: WorkingSet
    /// Whether the remote answers, from the outcomes of listings (`remoteAnswered`,
    /// `remoteFailed`), and the last network error.
    let reachability = ReachabilityTracker()
    /// Told when the remote goes offline and comes back.
    let userEvents: Feed<UserEvent>
    /// Listing saves not finished: unmount waits for them before the store closes.
    let saveGroup = DispatchGroup()
    let log = Logger(label: "favfs.domain")

    init(provider: any Provider, options: DomainOptions, placeholders: Placeholders,
         tasks: OwnedTasks, workingSet: WorkingSet, userEvents: Feed<UserEvent>) {
        self.provider = provider
        self.options = options
        self.placeholders = placeholders
        self.tasks = tasks
        self.workingSet = workingSet
        self.userEvents = userEvents
    }

    /// `Domain.lock`: the listings in flight (`refreshes`) and being saved, with the namespace.
    var lock: Guarded<DomainState> { placeholders.lock }
    var store: PlaceholderStore { placeholders.store }

    // MARK: connecting

    /// Asks the remote for its root. Fails when the remote refuses us (wrong credentials, no such
    /// folder) or is unreachable with nothing cached; succeeds offline when placeholders exist.
    /// `timeout` (seconds, 0: none) bounds the whole question, whatever the transport's own
    /// timeouts: a server that accepts connections and never answers took 37 s with `--timeout 5`.
    func connect(timeout: Double = 0) async throws -> Reachability {
        do {
            var root = try await Self.answer(within: timeout, remote: provider.remoteDescription) { [provider] in
                try await provider.item(for: .rootContainer)
            }
            root.kind = .folder
            root = lock.withLock { s in placeholders.withFirstSeenTimeLocked(&s, root) }
            try? store.upsert(root)
            lock.withLock { s in s.namespace.root = root }
            return .online
        } catch let e as ProviderError where e.isTransient {
            guard (try? store.item(.rootContainer))?.listedAt != nil else { throw e }
            log.warning("\(e) — serving the placeholders of earlier mounts until it answers")
            reachability.startOffline(e)
            return .offline(e)
        }
    }

    /// `body`'s result, or `.timedOut` once `seconds` (> 0) have passed; `body` is cancelled then.
    static func answer<T: Sendable>(within seconds: Double, remote: String,
                                    _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard seconds > 0 else { return try await body() }
        return try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                throw ProviderError(.timedOut, remote: remote, path: "/",
                                    detail: "no answer within \(seconds) s (--timeout)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    // MARK: answering

    /// Finds `name` in `parent`: from the placeholder listing while fresh (a name not in a fresh
    /// listing does not exist), else after enumerating the folder.
    func lookup(_ parent: ItemIdentifier, _ name: String, host: any EnumerationsHost) async throws -> Item {
        let state = try await folderState(parent, host: host)
        if let item = state[name] { return item }
        // Placeholders of an earlier mount may predate the name: ask before saying it is not there.
        if !state.verified, let item = try await verifiedState(parent, host: host)[name] { return item }
        if mayBeLeftOut(name), let item = try await leftOutItem(parent.child(name)) { return item }
        throw error(.notFound, parent.child(name), "no such item")
    }

    /// `lookup`, when the folder's verified listing is in memory (an absence is then known);
    /// starts the revalidation a stale listing gets, as `folderState` does.
    func lookupImmediately(_ parent: ItemIdentifier, _ name: String, host: any EnumerationsHost) -> ImmediateLookup? {
        let now = Domain.now
        let answer = lock.withLock { s -> ImmediateLookup? in
            guard let listed = s.namespace[parent], listed.listedAt != nil, listed.verified else { return nil }
            noteUse(&s, parent, listed, now: now, host: host)
            if let item = listed[name] { return .found(item) }
            // A listing that may leave out dot names cannot say such a name is absent.
            if mayBeLeftOut(name) { return nil }
            return .absent
        }
        if answer != nil { workingSet.used(parent, at: now) }
        return answer
    }

    /// Whether a listing of this remote may have left `name` out (nginx: dot names).
    func mayBeLeftOut(_ name: String) -> Bool {
        name.hasPrefix(".") && provider.capabilities.contains(.listingsMayLeaveOutDotNames)
    }

    /// The item at `id` asked for by name, for a name listings leave out; it joins its
    /// folder's listing here (later listings check it again: `stillThere`). Nil if absent.
    private func leftOutItem(_ id: ItemIdentifier) async throws -> Item? {
        do {
            let fetched = try await provider.item(for: id)
            let item = lock.withLock { s in s.namespace.withKeptTime(fetched) }
            placeholders.setPlaceholder(item)
            return item
        } catch let e as ProviderError where e.kind == .notFound {
            return nil
        }
    }

    /// A folder's listing: served from placeholders when there are any (revalidated in the
    /// background once older than `dirCacheTime`), fetched from the remote otherwise.
    func folderState(_ folder: ItemIdentifier, host: any EnumerationsHost) async throws -> FolderState {
        if let item = placeholders.cachedItem(folder), item.kind != .folder {
            throw error(.notAFolder, folder, "not a folder")
        }
        let now = Domain.now
        workingSet.used(folder, at: now)
        let known = placeholders.preload(folder)
        let cached: FolderState? = lock.withLock { s in
            guard let listed = known ? placeholders.loadedState(&s, folder) : s.namespace[folder], listed.listedAt != nil else { return nil }
            noteUse(&s, folder, listed, now: now, host: host)
            return listed
        }
        if let cached { return cached }
        let task = lock.withLock { s in s.refreshes[folder] ?? startRefresh(&s, folder, host: host) }
        return try await task.value
    }

    /// A folder's listing that was enumerated by this mount: placeholders loaded from an earlier
    /// mount are revalidated first, so a name missing from them is known not to exist (and a
    /// name in them known to exist) before `mkdir`, `create` or a rename rely on it. Unreachable
    /// remote: the placeholders as they are.
    func verifiedState(_ folder: ItemIdentifier, host: any EnumerationsHost) async throws -> FolderState {
        let state = try await folderState(folder, host: host)
        if state.verified { return state }
        let task = lock.withLock { s in s.refreshes[folder] ?? startRefresh(&s, folder, host: host) }
        do {
            return try await task.value
        } catch let e as ProviderError where e.isTransient {
            return state
        }
    }

    /// A listed folder is in use (lock held; the caller tells `workingSet`): a revalidation
    /// once it is older than `dirCacheTime` — or from an earlier mount, whatever its age.
    func noteUse(_ s: inout DomainState, _ folder: ItemIdentifier, _ listed: FolderState, now: Double, host: any EnumerationsHost) {
        if now - (listed.listedAt ?? 0) > options.dirCacheTime || !listed.verified, s.refreshes[folder] == nil,
           now - (listed.lastFailure ?? 0) > options.retryAfterFailure {
            _ = startRefresh(&s, folder, host: host)
        }
    }

    // MARK: enumerating

    /// Lists `folder` again, or joins its listing in flight.
    func refresh(_ folder: ItemIdentifier, host: any EnumerationsHost) -> Task<FolderState, Error> {
        lock.withLock { s in s.refreshes[folder] ?? startRefresh(&s, folder, host: host) }
    }

    /// Starts (lock held) an enumeration of `folder` that replaces its placeholders, owned by
    /// `tasks` (an unmount cancels it). Once the unmount began, a task that fails at once.
    func startRefresh(_ s: inout DomainState, _ folder: ItemIdentifier, host: any EnumerationsHost) -> Task<FolderState, Error> {
        let started = tasks.run { [self] in
            defer { lock.withLock { s in s.refreshes[folder] = nil } }
            let started = ReachabilityTracker.clock
            do {
                let state = try await enumerate(folder, host: host)
                remoteAnswered(startedAt: started)
                return state
            } catch {
                lock.withLock { s in s.namespace[folder]?.lastFailure = Domain.now }
                remoteFailed(error, startedAt: started)
                if let e = error as? ProviderError, e.kind == .notFound {
                    host.folderGone(folder)
                }
                log.warning("listing \(folder) failed: \(error)")
                throw error
            }
        }
        guard let t = started else {
            let remote = provider.remoteDescription
            return Task { throw ProviderError(.cancelled, remote: remote, path: folder.rawValue, detail: "unmounting") }
        }
        s.refreshes[folder] = t
        return t
    }

    /// Re-reads one item's metadata (after the remote changed under a read).
    func refreshItem(_ id: ItemIdentifier) async {
        guard !id.isRoot else { return }
        do {
            let listed = try await provider.item(for: id)
            let item = lock.withLock { s in s.namespace.withKeptTime(listed) }
            try? store.upsert(item)
            lock.withLock { s in s.namespace.replaceIfListed(item) }
        } catch let e as ProviderError where e.kind == .notFound {
            placeholders.forgetSubtree(id)
        } catch {
            log.warning("cannot refresh \(id): \(error)")
        }
    }

    // MARK: reachability

    /// A request to the remote that started at `startedAt` got an answer: if the remote was
    /// offline, it is back (published once). Call without `lock`.
    func remoteAnswered(startedAt: Double) {
        if let event = reachability.succeeded(startedAt: startedAt) {
            log.notice("\(provider.remoteDescription) answers again")
            userEvents.publish(event)
        }
    }

    /// A request to the remote that started at `startedAt` failed: a network error takes the
    /// remote offline (published once, not per failure). Call without `lock`.
    func remoteFailed(_ error: Error, startedAt: Double) {
        guard let e = error as? ProviderError, let event = reachability.failed(e, startedAt: startedAt) else { return }
        log.warning("\(provider.remoteDescription) does not answer: \(e)")
        userEvents.publish(event)
    }
}
