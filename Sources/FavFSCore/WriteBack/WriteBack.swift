import Foundation
import Logging

/// What write-back asks of the core it uploads for (`Domain`): folder times, kept times, the
/// writer (placeholders it writes through `Placeholders`). Passed to each call that needs it, as `PinningHost` is, so a running upload keeps
/// its host alive and write-back holds no reference back to it.
protocol WriteBackHost: AnyObject, Sendable {
    /// An entry of `folder` was created, removed or renamed: its time moves.
    func folderChanged(_ folder: ItemIdentifier)
    /// Keeps a time the remote does not keep, bound to `version`.
    func keepTime(_ id: ItemIdentifier, version: String, time: Timestamp, because e: ProviderError)
    /// The provider's write side, or a read-only error.
    func writer(_ id: ItemIdentifier) throws -> any WritableProvider
}

/// Write-back: a dirty item's cache file is uploaded with the version it was based on. The
/// journal row goes only once the remote confirmed; a remote change meanwhile never overwrites
/// the remote — the local content is uploaded beside it as a conflict copy.
///
/// Its decisions are `DirtySet`'s (a value in `DomainState`, behind `Domain.lock`, which it
/// shares with the namespace: an upload's commit changes both in one step); this part runs
/// them: the upload loop and its commit (+Uploads), streamed uploads (+Streaming). Failures
/// and refusals are `UploadFailures`', conflict copies `ConflictCopies`', the same-content
/// check `SameContentCheck`'s: parts of their own it holds. Its tasks are the core's
/// (`OwnedTasks`), stopped at unmount after the uploads drained.
final class WriteBack: Sendable, ReportsRemoteErrors {
    let provider: any Provider
    /// The placeholders a commit, a refusal or a conflict copy writes (and the store).
    let placeholders: Placeholders
    let content: ContentCache
    let options: DomainOptions
    /// Open files: a commit forgets the version an item was opened at; a stream asks for writers.
    let handles: HandleTable
    let tasks: OwnedTasks
    /// Back-off, failures and refusals of uploads.
    let failures: UploadFailures
    /// Uploads that met another client's change: the local edit goes beside it.
    let conflicts: ConflictCopies
    /// Whether the server already holds the bytes an upload would send.
    let sameContent: SameContentCheck
    /// The provider's streamed uploads (and their threshold), looked up once: asked on every write.
    let streamer: (provider: any StreamingUploadProvider, threshold: Int64)?
    let log = Logger(label: "favfs.domain")

    init(provider: any Provider, placeholders: Placeholders, content: ContentCache, options: DomainOptions,
         handles: HandleTable, tasks: OwnedTasks, userEvents: Feed<UserEvent>) {
        self.provider = provider
        self.placeholders = placeholders
        self.content = content
        self.options = options
        self.handles = handles
        self.tasks = tasks
        failures = UploadFailures(provider: provider, placeholders: placeholders, content: content, options: options,
                                  userEvents: userEvents)
        conflicts = ConflictCopies(provider: provider, placeholders: placeholders, content: content, handles: handles,
                                   failures: failures, userEvents: userEvents)
        sameContent = SameContentCheck(provider: provider, content: content, store: placeholders.store, lock: placeholders.lock)
        streamer = (provider as? any StreamingUploadProvider).map { ($0, $0.streamingThreshold) }
    }

    /// `Domain.lock`: the dirty set, and the namespace a commit updates with it.
    var lock: Guarded<DomainState> { placeholders.lock }
    var store: PlaceholderStore { placeholders.store }

    /// Starts uploading `id` unless an upload of it is already running (which will notice the
    /// newer generation and go again).
    func scheduleUpload(_ id: ItemIdentifier, host: any WriteBackHost) {
        // Refused content waits for a change (markDirty clears it): the server said no.
        let claimed = lock.withLock { s in s.dirty.claimUpload(id) ? s.dirty[id]?.incarnation : nil }
        guard let claimed else { return }
        // Unmounting (no new work): the item stays dirty in the journal for the next mount.
        if !tasks.start({ [self] in await uploadLoop(id, incarnation: claimed, host: host) }) { _ = lock.withLock { s in s.dirty.releaseClaim(id) } }
    }

    /// Uploads every item the journal lists (after a crash or kill, at mount).
    func resumeUploads(host: any WriteBackHost) {
        let rows = (try? store.journalEntries()) ?? []
        lock.withLock { s in
            for j in rows {
                let failure = j.refused.map {
                    ProviderError(ProviderError.Kind(rawValue: $0) ?? .denied, remote: provider.remoteDescription,
                                  path: j.id.rawValue, detail: j.lastError ?? "refused by the server")
                }
                s.dirty.resume(j, failure: failure)
            }
        }
        // The placeholders may predate the last writes (a crash before close): sizes from the files.
        for j in rows {
            guard var item = placeholders.cachedItem(j.id), let (fd, length) = try? content.openForUpload(j.id) else { continue }
            close(fd)
            if item.size != length { item.size = length; placeholders.setPlaceholder(item, persist: true) }
        }
        let refused = rows.filter { $0.refused != nil }.count
        if rows.count > refused { log.info("resuming \(rows.count - refused) pending upload(s) from the journal") }
        if refused > 0 { log.warning("\(refused) file(s) the server refused stay here until changed or removed (favfs status shows them)") }
        for j in rows { scheduleUpload(j.id, host: host) }
    }

    /// Waits for a running upload of `id`, if any (errors ignored: the caller acts either way).
    func waitIfUploading(_ id: ItemIdentifier) async {
        guard lock.withLock({ s in s.dirty.isUploading(id) }) else { return }
        try? await waitForUpload(id, untilClean: true)
    }

    /// Waits until the remote confirmed `id`'s content as it is now (changes made after this call
    /// are not waited for: fsync), or, `untilClean`, until no upload of it is left at all (before
    /// a rename or delete, which must not race an upload still running). Returns at once for an
    /// item that was dropped. Throws the upload's permanent failure.
    /// Call after `scheduleUpload` (or a close that schedules it).
    func waitForUpload(_ id: ItemIdentifier, untilClean: Bool = false) async throws {
        // A stream would wait for the writer's close: the content as it is now goes whole instead.
        streamOutOfOrder(id, "an fsync, rename or delete waits for the upload", uploadNow: true)
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            let immediate = lock.withLock { s in
                s.dirty.wait(id, untilClean: untilClean) { UploadWaiter(generation: $0, continuation: c) }
            }
            if let immediate { c.resume(with: immediate) }
        }
    }

    /// Uploads everything dirty at or below `id` and waits for it (before a rename).
    func flushUploads(under id: ItemIdentifier, host: any WriteBackHost) async throws {
        // In path order: of several that fail, the same one is named each time.
        let ids = lock.withLock { s in s.dirty.ids(atOrUnder: id) }.sorted { $0.rawValue < $1.rawValue }
        for d in ids { scheduleUpload(d, host: host) }
        for d in ids { try await waitForUpload(d, untilClean: true) }
    }

    /// Starts again the uploads that stopped on a transient failure (the server was down or
    /// kept failing): called by the poller, so they resume once the server answers again.
    func retryFailedUploads(host: any WriteBackHost) {
        let ids = lock.withLock { s in s.dirty.transientlyFailed }
        for id in ids { scheduleUpload(id, host: host) }
    }

    /// Uploads still pending: how many items and bytes, and those that failed (tried again at
    /// the next change, fsync or mount). Content the server refused is not pending: see
    /// `refusedUploads`.
    func pendingUploads(host: any WriteBackHost) -> (items: Int, bytes: Int64, failed: [ProviderError]) {
        let snapshot = lock.withLock { s in s.dirty.pending }
        let bytes = snapshot.keys.reduce(Int64(0)) { $0 + (placeholders.cachedItem($1)?.size ?? 0) }
        return (snapshot.count, bytes, snapshot.values.compactMap { $0.uploading ? nil : $0.failure })
    }

    /// Files the server refused for good (too large, denied...): kept in the mount and in
    /// lost+found until changed or removed.
    func refusedUploads() -> [ProviderError] {
        lock.withLock { s in s.dirty.refusals }
    }

    /// Starts every pending upload and waits until none is left or only failed ones remain
    /// (unmount). `progress` is called about every half second.
    func drainUploads(progress: @Sendable (Int, Int64) -> Void, host: any WriteBackHost) async -> [ProviderError] {
        lock.withLock { s in s.dirty.draining = true }
        defer { lock.withLock { s in s.dirty.draining = false } }
        for id in lock.withLock({ s in s.dirty.ids }) {
            streamOutOfOrder(id, "unmounting", uploadNow: true)
            scheduleUpload(id, host: host)
        }
        while true {
            let (items, bytes, failed) = pendingUploads(host: host)
            if items == 0 { return [] }
            if failed.count == items || Task.isCancelled { return failed }
            progress(items, bytes)
            try? await Task.sleep(nanoseconds: 500_000_000)
        }
    }
}
