import Foundation
import Logging

/// Uploads that cannot succeed as they are. A folder deleted on the server under a file written
/// here is re-created (the file stays where the user put it); any other permanent refusal
/// (denied, too large, no space at the server, a name it will not take) ends the upload: the
/// file stays in the mount as written, marked refused, with a copy in `CACHEDIR/lost+found`.
/// Nothing is retried forever, and unmount never waits for it. A transient failure is
/// recorded and waited out (`backOff`), a bounded number of times.
final class UploadFailures: Sendable {
    let provider: any Provider
    let placeholders: Placeholders
    let content: ContentCache
    let options: DomainOptions
    /// Told of refused uploads.
    let userEvents: Feed<UserEvent>
    let log = Logger(label: "favfs.domain")

    init(provider: any Provider, placeholders: Placeholders, content: ContentCache, options: DomainOptions,
         userEvents: Feed<UserEvent>) {
        self.provider = provider
        self.placeholders = placeholders
        self.content = content
        self.options = options
        self.userEvents = userEvents
    }

    /// `Domain.lock`: the dirty set, which records attempts, failures and refusals.
    var lock: Guarded<DomainState> { placeholders.lock }
    var store: PlaceholderStore { placeholders.store }

    /// After a transient failure: records it in the journal and waits before the next attempt.
    /// False when the attempts are used up (the upload is then marked failed): bounded, so a
    /// server that keeps failing keeps neither this loop nor unmount (which waits for it) going
    /// forever. The content stays dirty; the poller tries it again (`retryFailedUploads`), as
    /// do the next change and the next mount.
    func backOff(_ id: ItemIdentifier, journal: JournalEntry, attempt: Int, after e: ProviderError) async -> Bool {
        var j = journal
        j.attempts += 1
        j.lastError = e.description
        try? store.saveJournal(j)
        lock.withLock { s in s.dirty.attempted(id, j) }
        let limit = lock.withLock { s in s.dirty.draining } ? options.maxUploadAttemptsWhileUnmounting : options.maxUploadAttempts
        if attempt >= limit || Task.isCancelled {
            log.error("upload of \(id) failed \(attempt) times (last: \(e)); the local content is kept in the cache and tried again later")
            finishFailed(id, e)
            return false
        }
        let delay = min(options.maxUploadBackoff, 0.5 * pow(2, Double(min(attempt, 10))))
        log.warning("upload of \(id) failed (\(e)); retrying in \(delay) s (attempt \(attempt) of \(limit))")
        try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
        return true
    }

    /// The upload failed and is not tried again now: its waiters (an fsync) get `e`; the
    /// content stays dirty for the next change, retry pass or mount.
    func finishFailed(_ id: ItemIdentifier, _ e: ProviderError) {
        let waiters = lock.withLock { s in s.dirty.failed(id, e) }
        for w in waiters { w.resume(throwing: e) }
    }

    /// Re-creates the folders above `id` that are missing at the remote, top down. True when
    /// at least one was created (the upload is worth trying again). Throws a transient failure
    /// (the server in trouble meanwhile): that is no refusal, the caller tries again later.
    func recreateMissingFolders(above id: ItemIdentifier, host: any WriteBackHost) async throws -> Bool {
        guard let w = try? host.writer(id) else { return false }
        var missing: [ItemIdentifier] = []
        var folder = id.parent
        while let f = folder, f != .rootContainer {
            do {
                let item = try await provider.item(for: f)
                if item.kind != .folder { return false }
                break
            } catch let e as ProviderError where e.kind == .notFound {
                missing.append(f)
                folder = f.parent
            } catch let e as ProviderError where e.isTransient {
                throw e
            } catch {
                return false
            }
        }
        guard !missing.isEmpty else { return false }
        for f in missing.reversed() {
            do {
                var created = try await w.createFolder(f)
                created.kind = .folder
                placeholders.setPlaceholder(created, persist: true)
            } catch let e as ProviderError where e.kind == .exists {
                continue  // made by someone else meanwhile: as good
            } catch let e as ProviderError where e.isTransient {
                log.warning("cannot re-create the folder \(f) for the upload of \(id) yet: \(e)")
                throw e
            } catch {
                log.error("cannot re-create the folder \(f) for the upload of \(id): \(error)")
                return false
            }
        }
        log.warning("the folder \(missing.last!) was deleted on \(provider.remoteDescription) while \(id) waited for its upload: re-created \(missing.count) folder(s) to keep it")
        return true
    }

    /// Ends an upload that failed for good. The file stays in the mount as written (its state
    /// "upload refused: …", shown by `favfs status`), a copy of its content goes to lost+found,
    /// and the journal row records the refusal so neither a retry nor a remount sends it again;
    /// a change to it (or removing it) is the user's answer. Waiters get `error`.
    func abandonUpload(_ id: ItemIdentifier, _ error: ProviderError, host: any WriteBackHost) async {
        // A copy (the file stays in use), made off the cooperative pool: it may be gigabytes.
        let kept = try? await BlockingWork.run { [content] in content.keepInLostAndFound(id, independentCopy: true) }
        // The refusal and its row under SQLite's writer: a rename, which records its move
        // under the writer too, cannot come between them and leave the row under the old name.
        var outcome: (journal: JournalEntry?, waiters: [UploadWaiter])?
        do {
            try store.holdingWriter { _ in
                outcome = lock.withLock { s in s.dirty.refused(id, error) }
                if let journal = outcome?.journal { try store.saveJournal(journal) }
            }
        } catch {
            log.error("cannot record that the server refused \(id): \(error); it is tried again at the next mount")
        }
        // The upload ends whether or not the writer was had.
        let waiters = (outcome ?? lock.withLock { s in s.dirty.refused(id, error) }).waiters
        let copy = kept.flatMap { $0 }.map { "a copy is in \($0.path)" } ?? "it could not be copied to lost+found (\(content.lostAndFound.directory.path))"
        log.error("upload of \(id) refused for good: \(error). The file stays in the mount as written until it is changed or removed; \(copy)")
        if let parent = id.parent { host.folderChanged(parent) }
        let reason = (error.detail.isEmpty ? "\(error.kind)" : error.detail) + (error.status.map { " (status \($0))" } ?? "")
        userEvents.publish(.uploadRefused(id, reason: reason, keptAt: kept.flatMap { $0 }?.path))
        for w in waiters { w.resume(throwing: error) }
    }
}

extension ProviderError {
    /// The server refused the upload and would refuse it again: retrying cannot help.
    var isPermanentRefusal: Bool {
        switch kind {
        case .denied, .tooLarge, .noSpace, .invalidName, .nameTooLong, .notSupported, .exists, .notFound, .notAFolder, .isAFolder:
            return true
        default:
            return false
        }
    }
}
