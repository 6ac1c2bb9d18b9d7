import Foundation
import Logging

/// Conflict copies: the remote changed under a local edit. The remote version keeps the name;
/// the local one is uploaded beside it as `NAME (conflict YYYY-MM-DD HHMMSS).EXT`, and the
/// edit (content, open handles, dirty state) becomes the copy's.
final class ConflictCopies: Sendable, ReportsRemoteErrors {
    let provider: any Provider
    let placeholders: Placeholders
    let content: ContentCache
    /// Open files: they follow the edit to the copy.
    let handles: HandleTable
    /// A copy that cannot be sent yet is waited for or refused as any upload.
    let failures: UploadFailures
    /// Told of each conflict copy made.
    let userEvents: Feed<UserEvent>
    let log = Logger(label: "favfs.domain")

    init(provider: any Provider, placeholders: Placeholders, content: ContentCache, handles: HandleTable,
         failures: UploadFailures, userEvents: Feed<UserEvent>) {
        self.provider = provider
        self.placeholders = placeholders
        self.content = content
        self.handles = handles
        self.failures = failures
        self.userEvents = userEvents
    }

    var lock: Guarded<DomainState> { placeholders.lock }
    var store: PlaceholderStore { placeholders.store }

    /// `NAME (conflict YYYY-MM-DD HHMMSS).EXT`
    static func conflictName(_ name: String, date: Date, attempt: Int) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone.current
        f.dateFormat = "yyyy-MM-dd HHmmss"
        let tag = "conflict \(f.string(from: date))" + (attempt > 0 ? " \(attempt + 1)" : "")
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return "\(name[..<dot]) (\(tag))\(name[dot...])"
        }
        return "\(name) (\(tag))"
    }

    /// The remote changed under a local edit: upload ours beside it, keep theirs under the name.
    /// `generation`: the dirty state's generation when this upload began. Returns the copy
    /// when it changed while it was sent: its upload is to start again.
    func saveConflictCopy(_ id: ItemIdentifier, item: Item, cause: ProviderError, generation: Int, host: any WriteBackHost) async -> ItemIdentifier? {
        guard let parent = id.parent, let w = try? host.writer(id) else { return nil }
        let now = Date()
        var attempt = 0
        var recreatedFolders = false
        var saved: Item?
        // A server in trouble: waited for and tried again, as often as any upload (bounded; then
        // the edit stays dirty here and the poller, the next change or mount try again).
        var failedAttempts = 0
        func again(after e: ProviderError) async -> Bool {
            failedAttempts += 1
            guard let journal = lock.withLock({ s in s.dirty[id]?.journal }) else { return false }
            return await failures.backOff(id, journal: journal, attempt: failedAttempts, after: e)
        }
        while saved == nil {
            let copyId = parent.child(Self.conflictName(id.name, date: now, attempt: attempt))
            do {
                let (fd, length) = try content.openForUpload(id)
                defer { close(fd) }
                var copy = try await w.upload(copyId, from: ContentSource(fd: fd, length: length), precondition: .mustNotExist)
                copy.kind = .file
                placeholders.setPlaceholder(copy, persist: true)
                log.warning("conflict: \(id) changed on \(provider.remoteDescription) while edited here (\(cause.detail)); the remote version keeps the name, the local one was saved as \(copyId.name)")
                saved = copy
            } catch let e as ProviderError where e.kind == .exists && attempt < 20 {
                attempt += 1
            } catch where Task.isCancelled {
                failures.finishFailed(id, self.error(.cancelled, id, "the conflict copy was stopped by the unmount"))
                return nil
            } catch let e as ProviderError where e.isTransient {
                if await again(after: e) { continue }
                return nil
            } catch let e as ProviderError where e.kind == .notFound && !recreatedFolders {
                recreatedFolders = true
                do {
                    if try await failures.recreateMissingFolders(above: copyId, host: host) { continue }
                } catch {
                    recreatedFolders = false
                    if await again(after: error as? ProviderError ?? e) { continue }
                    return nil
                }
                await failures.abandonUpload(id, e, host: host)
                return nil
            } catch let e as ProviderError where !e.isPermanentRefusal {
                log.error("cannot save the conflict copy of \(id): \(e); the local content stays in the cache")
                failures.finishFailed(id, e)
                return nil
            } catch {
                log.error("cannot save the conflict copy of \(id): \(error)")
                await failures.abandonUpload(id, error as? ProviderError ?? self.error(.serverError, id, "\(error)"), host: host)
                return nil
            }
        }
        guard let saved else { return nil }
        // The name's remote version, read before the edit leaves the name: the name shows it
        // from the same step on (in between, a reader got the local size without local bytes).
        let remote: Result<Item, Error>
        do { remote = .success(try await provider.item(for: id)) } catch { remote = .failure(error) }
        let nameGone: Bool
        if case .failure(let e as ProviderError) = remote, e.kind == .notFound { nameGone = true } else { nameGone = false }
        let uploadAgain: ItemIdentifier?
        switch handEditToConflictCopy(id, copy: saved, generation: generation, name: try? remote.get(), nameGone: nameGone) {
        case .success(let copy): uploadAgain = copy
        case .failure(let e):
            log.error("cannot record the conflict copy of \(id) as \(saved.identifier.name): \(e); the local content stays in the cache and is sent again")
            failures.finishFailed(id, self.error(.localIO, id, "cannot record the conflict copy: \(e)"))
            return nil
        }
        userEvents.publish(.conflictCopy(original: id, copy: saved.identifier))
        if case .failure(let e) = remote, !nameGone { log.warning("cannot refresh \(id): \(e)") }
        return uploadAgain
    }

    /// The local edit is the conflict copy's now: its cached content, the open handles on it
    /// (their later writes update the copy, not the name that went to the other version) and,
    /// when it changed while the copy was sent, its dirty state, uploaded again against the
    /// copy; the name takes the remote's item (`name`, when it could be read), or goes when the
    /// remote has nothing there (`nameGone`) — in this same step: a rename waiting for this
    /// upload (its destination) goes on once the waiters are answered, and the name forgotten
    /// after that took the file it had just renamed there (a 300-step reference-model run,
    /// seed 34: `unlink` answered ENOENT for it). Store and memory
    /// change together under the lock `markDirty` and `openFile` read the dirty state under (as
    /// in `commit`): no write lands between the journal row going and the content going, where
    /// it would be lost. SQLite's writer is taken before that lock (`holdingWriter`), so the
    /// store's part waits for no one under it. Returns the copy when its upload is to start again (it changed while
    /// sent), or the store's error.
    private func handEditToConflictCopy(_ id: ItemIdentifier, copy: Item, generation: Int, name: Item?,
                                        nameGone: Bool) -> Result<ItemIdentifier?, Error> {
        let copyId = copy.identifier
        let version = Domain.contentVersion(copy)
        // SQLite's writer is taken first, then the lock: the rows move under it, with the open
        // handles' entry, in one step, without waiting for a listing being saved.
        let outcome = Result { try store.holdingWriter { _ in lock.withLock { s -> Result<(answered: [UploadWaiter], again: Bool), Error> in
            guard let d = s.dirty[id] else { return .success(([], false)) }
            let changed = d.generation != generation
            let nameItem = name.map { s.namespace.withKeptTime($0) }
            do {
                try content.move(id, to: copyId, version: version) {
                    try store.moveEditToConflictCopy(id, copy: copy, contentVersion: version, name: nameItem,
                                                     nameGone: nameGone, journalSince: d.journal.since, stillDirty: changed)
                }
            } catch {
                return .failure(error)
            }
            handles.forgetOpenedVersion(id)
            if let nameItem { s.namespace.replaceIfListed(nameItem) }
            if nameGone { s.namespace.removeName(id) }
            // Waiters for what the copy holds (and for the name to be clean) are answered; an
            // fsync of a later change waits for the copy's upload (the row moved in the store,
            // now based on the copy).
            return .success(s.dirty.handedToConflictCopy(id, copy: copyId, copyVersion: copy.version, generation: generation))
        } } }.flatMap { $0 }
        switch outcome {
        case .failure(let e): return .failure(e)
        case .success(let (answered, again)):
            for w in answered { w.resume() }
            return .success(again ? copyId : nil)
        }
    }
}
