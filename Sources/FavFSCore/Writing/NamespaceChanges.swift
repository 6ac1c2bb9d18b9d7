import Foundation
import Logging

/// Namespace changes made through the mount: mkdir, symlink, unlink, rmdir and rename go to
/// the remote at once, and the placeholders change only once it agreed. Pending uploads at and
/// below a renamed or deleted item finish first, so the remote moves what the user wrote.
/// Each call is given the host a listing it starts reports to (`EnumerationsHost`).
final class NamespaceChanges: Sendable, ReportsRemoteErrors {
    let provider: any Provider
    let content: ContentCache
    let placeholders: Placeholders
    /// A name is looked up, or found free, in a verified listing.
    let enumerations: Enumerations
    /// The writer, folder times, dirty checks, and the host of the uploads a rename restarts.
    let writing: Writing
    /// The pins follow a rename and go with a delete.
    let pinning: Pinning
    let log = Logger(label: "favfs.domain")

    init(provider: any Provider, content: ContentCache, placeholders: Placeholders, enumerations: Enumerations,
         writing: Writing, pinning: Pinning) {
        self.provider = provider
        self.content = content
        self.placeholders = placeholders
        self.enumerations = enumerations
        self.writing = writing
        self.pinning = pinning
    }

    var lock: Guarded<DomainState> { placeholders.lock }
    var store: PlaceholderStore { placeholders.store }
    var writeBack: WriteBack { writing.writeBack }

    func makeFolder(_ parent: ItemIdentifier, _ name: String, host: any EnumerationsHost) async throws -> Item {
        let id = parent.child(name)
        let w = try writing.writer(id)
        if ItemIdentifier.validate(name: name) != nil { throw error(.invalidName, id, "not a valid folder name") }
        if let problem = w.storageProblem(id, kind: .folder) { throw problem }
        if try await enumerations.verifiedState(parent, host: host)[name] != nil { throw error(.exists, id, "already exists") }
        var item = try await w.createFolder(id)
        item.kind = .folder
        try? store.replaceChildren(of: item, with: [], listedAt: Domain.now)
        placeholders.setPlaceholder(item, persist: false)
        lock.withLock { s in
            var created = FolderState(folder: id, items: [], listedAt: Domain.now)
            created.verified = true
            s.namespace[id] = created
        }
        writing.folderChanged(parent)
        return item
    }

    func makeSymlink(_ parent: ItemIdentifier, _ name: String, target: String, host: any EnumerationsHost) async throws -> Item {
        let id = parent.child(name)
        let w = try writing.writer(id)
        if let problem = w.storageProblem(id, kind: .symlink) { throw problem }
        if try await enumerations.verifiedState(parent, host: host)[name] != nil { throw error(.exists, id, "already exists") }
        let item = try await w.createSymlink(id, target: target)
        placeholders.setPlaceholder(item)
        writing.folderChanged(parent)
        return item
    }

    /// Deletes a file or symlink. A file created here and never sent is only dropped locally; one
    /// whose upload was tried but never confirmed is deleted at the remote if it holds our bytes.
    func remove(_ parent: ItemIdentifier, _ name: String, host: any EnumerationsHost) async throws {
        let id = parent.child(name)
        let w = try writing.writer(id)
        let item = try await enumerations.lookup(parent, name, host: host)
        if item.kind == .folder { throw error(.isAFolder, id, "is a folder") }
        try await writing.reading.keepContentForOpenHandles(item)
        // Out of the dirty set before the remote delete: a close still in flight (FUSE sends
        // RELEASE after close returns) must not upload, and so resurrect, what is being deleted.
        // Taken only while no upload of it runs, in one step with that check: an upload claimed
        // after a wait but before the removal (a quiet timer firing) put the file back at the
        // server after a delete that found nothing to send — sqlite's journal was left there,
        // hot, and the next journal of that name met it as a conflict.
        var state: DirtyState?
        while true {
            let taken: DirtyState?? = lock.withLock { s in s.dirty.isUploading(id) ? .none : .some(s.dirty.remove(id)) }
            if case .some(let s) = taken { state = s; break }
            await writeBack.waitIfUploading(id)
        }
        let isNew = state?.journal.isNew == true, mayBeAtRemote = state?.mayBeAtRemote == true
        log.debug("remove \(id) new=\(isNew) mayBeAtRemote=\(mayBeAtRemote)")
        if !isNew || mayBeAtRemote {
            do {
                if isNew {
                    // Never confirmed, yet an attempt may have stored it (its answer lost, a
                    // crash before the commit): left there, it came back at the next listing.
                    // Deleted only where the server holds our bytes; else it is another client's.
                    // A server that does not answer the question (offline): removed here only,
                    // as before any upload, so that unlink works offline; said in the log.
                    let ours: Item?
                    do { ours = try await writeBack.sameContent.remoteItemIfOurs(id, lostReplies: state?.lostReplies ?? []) }
                    catch {
                        log.warning("\(id): removed here only; whether an upload of it that was never confirmed reached the server could not be checked (\(error)): if it did, it shows again at the next listing")
                        ours = nil
                    }
                    if let ours { try await w.delete(ours) }
                } else {
                    try await w.delete(item)
                }
            }
            catch let e as ProviderError where e.kind == .notFound { /* already gone: that is what we wanted */ }
            catch {
                if let state { lock.withLock { s in s.dirty.restore(id, state) } } // not deleted: the change stays pending
                throw error
            }
        }
        // The journal row, the content record and the placeholder in one store transaction:
        // sqlite deletes its rollback journal at every commit, and three transactions waited
        // for SQLite's writer three times (behind the close's record save).
        var endRemoving = false
        do {
            try store.holdingWriter { _ in
                try? store.deleteJournal(id)
                endRemoving = content.removeInHeldTransaction(id)
                try? store.removeSubtree(id)
            }
        } catch {
            log.warning("\(id): deleted, but the store could not record it (\(error)); the next listing tells again")
        }
        if endRemoving { content.endRemoving(id) }
        placeholders.forgetNames(id)
        pinning.drop(id)
        writing.folderChanged(parent)
        for waiter in state?.waiters ?? [] { waiter.resume() }
    }

    /// Deletes an empty folder. Emptiness is checked against a fresh listing: a WebDAV DELETE
    /// would remove a non-empty folder with everything in it.
    func removeFolder(_ parent: ItemIdentifier, _ name: String, host: any EnumerationsHost) async throws {
        let id = parent.child(name)
        let w = try writing.writer(id)
        let item = try await enumerations.lookup(parent, name, host: host)
        guard item.kind == .folder else { throw error(.notAFolder, id, "not a folder") }
        // Remote children are the provider's check (WritableProvider.delete refuses a non-empty folder).
        // Files changed here anywhere below it (not only its own: a folder inside may be gone
        // at the remote, and its files' uploads would put it back).
        if lock.withLock({ s in s.dirty.hasAny(under: id) }) { throw error(.notEmpty, id, "folder not empty") }
        do { try await w.delete(item) }
        catch let e as ProviderError where e.kind == .notFound { }
        placeholders.forgetSubtree(id)
        pinning.drop(id)
        writing.folderChanged(parent)
    }

    /// Renames or moves an item, replacing a destination file (or empty folder) unless
    /// `noReplace`. Pending uploads at and below the source finish first, so the remote moves
    /// what the user wrote.
    func rename(_ parent: ItemIdentifier, _ name: String, to newParent: ItemIdentifier, _ newName: String,
                noReplace: Bool, host: any EnumerationsHost) async throws -> (from: ItemIdentifier, to: ItemIdentifier) {
        let source = parent.child(name), destination = newParent.child(newName)
        let w = try writing.writer(source)
        if ItemIdentifier.validate(name: newName) != nil { throw error(.invalidName, destination, "not a valid name") }
        let item = try await enumerations.lookup(parent, name, host: host)
        if source == destination { return (source, destination) }
        if let problem = w.storageProblem(destination, kind: item.kind) { throw problem }
        let existing = try await enumerations.verifiedState(newParent, host: host)[newName]
        if let existing {
            if noReplace { throw error(.exists, destination, "already exists") }
            if existing.kind == .folder {
                guard item.kind == .folder else { throw error(.isAFolder, destination, "is a folder") }
                // Files written in it here and not uploaded yet count, as what the remote lists does.
                if lock.withLock({ s in s.dirty.hasAny(under: destination) }) {
                    throw error(.notEmpty, destination, "folder not empty")
                }
                let inside = try await provider.enumerateItems(in: destination, page: nil).items
                if !inside.isEmpty { throw error(.notEmpty, destination, "folder not empty") }
            } else if item.kind == .folder {
                throw error(.notAFolder, destination, "not a folder")
            }
        }
        // What the remote moves must be what the user wrote; an upload still running for a
        // replaced destination must not land after the move.
        log.debug("rename \(source) -> \(destination) replacing=\(existing != nil)")
        if existing == nil, item.kind == .file, try await renameRefusedNewFile(item, to: destination) { return (source, destination) }
        try await writeBack.flushUploads(under: source, host: writing)
        if let existing {
            try? await writeBack.flushUploads(under: destination, host: writing)
            if existing.kind == .file { try await writing.reading.keepContentForOpenHandles(existing) }
        }
        // From here until the rename is recorded, no upload under either name starts (a write
        // and a close by another process meanwhile): it would write under the old name after
        // the server moved the file, or over what was moved in. One begun since the flush ends first.
        let names = [source, destination]
        lock.withLock { s in s.dirty.beginMove(names) }
        var moved: Item
        let reupload: [ItemIdentifier], replacedWaiters: [UploadWaiter]
        do {
            try await waitForUploads(atOrUnder: names)
            moved = try await w.move(item, to: destination, replacing: existing != nil)
            moved.kind = item.kind
            // The replaced file lives on only in its open descriptors (see adoptOrphan).
            if let existing, existing.kind == .file { content.remove(destination) }
            // Content still cached under the destination's name (files of a folder that went at
            // the remote keep their cache records) would collide with what moves in: the move
            // was not recorded (SQLite's UNIQUE on content.id) after the server had made it.
            // None of it is dirty: a folder holding changes stays, and is not empty then.
            for r in (try? store.contentRecords(atOrBelow: destination)) ?? [] where !writing.isDirty(r.id) { content.remove(r.id) }
            do {
                (reupload, replacedWaiters) = try recordMove(source, to: destination, replacing: existing != nil, names: names)
            } catch {
                throw self.error(.localIO, source, "cannot record the rename: \(error)")
            }
        } catch {
            for id in lock.withLock({ s in s.dirty.endMove(names) }) { writeBack.scheduleUpload(id, host: writing) }
            throw error
        }
        pinning.move(source, to: destination)
        // An fsync of the replaced file waited for content that no longer exists anywhere.
        for w in replacedWaiters { w.resume() }
        for id in reupload { writeBack.scheduleUpload(id, host: writing) }
        placeholders.setPlaceholder(lock.withLock { s in s.namespace.withKeptTime(moved) })
        writing.folderChanged(parent)
        if newParent != parent { writing.folderChanged(newParent) }
        return (source, destination)
    }

    /// Records a rename the remote made in one step under SQLite's writer and `Domain.lock`
    /// (the lock order): the store's rows, the open content entries, the namespace and the dirty
    /// state move together. A change marked meanwhile (`Writing.markDirty`, which holds the
    /// writer from its look at the name to its commit) lands wholly before, and moves along, or
    /// wholly after, under the new name. Returns the moved items whose upload is due now and the
    /// waiters of the replaced ones.
    private func recordMove(_ source: ItemIdentifier, to destination: ItemIdentifier, replacing: Bool,
                            names: [ItemIdentifier]) throws -> (reupload: [ItemIdentifier], replacedWaiters: [UploadWaiter]) {
        try store.holdingWriter { _ in
            try lock.withLock { s in
                try content.move(source, to: destination) { try store.move(source, to: destination) }
                s.namespace.moved(source, to: destination)
                // The replaced file's changes went with it (store.move dropped its journal row):
                // its dirty state must not stay behind for the moved file to take as its own (an
                // upload that kept failing left it, and the moved file read and uploaded that content).
                let (reupload, replacedWaiters) = s.dirty.renamed(source, to: destination, replacing: replacing)
                return (reupload + s.dirty.endMove(names), replacedWaiters)
            }
        }
    }

    /// Waits until no upload at or below `names` runs (none starts meanwhile: `beginMove`); a
    /// stream among them is given up, its file going whole after the rename. A minute at most.
    private func waitForUploads(atOrUnder names: [ItemIdentifier]) async throws {
        let deadline = Date().addingTimeInterval(60)
        while true {
            let busy = lock.withLock { s in s.dirty.uploading(atOrUnder: names) }
            guard let first = busy.first else { return }
            for id in busy { writeBack.streamOutOfOrder(id, "the file is being renamed", uploadNow: true) }
            if Date() >= deadline { throw error(.timedOut, first, "its upload is still running; the rename was not sent") }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
    }

    /// A new file the server refused (a name it will not take, too large) was never on the
    /// server: renaming it is local, and the new name is worth another upload. False when
    /// `item` is not such a file.
    private func renameRefusedNewFile(_ item: Item, to destination: ItemIdentifier) async throws -> Bool {
        let source = item.identifier
        guard let state = lock.withLock({ s in s.dirty[source] }), state.journal.isNew, state.journal.refused != nil else { return false }
        // In one step under SQLite's writer and `Domain.lock`, as `recordMove`.
        do {
            try store.holdingWriter { _ in
                try lock.withLock { s in
                    try content.move(source, to: destination) { try store.move(source, to: destination) }
                    s.namespace.removeName(source)
                    if let journal = s.dirty.refusedFileRenamed(source, to: destination) { try? store.saveJournal(journal) }
                }
            }
        } catch {
            throw self.error(.localIO, source, "cannot record the rename: \(error)")
        }
        var moved = item
        moved.identifier = destination
        placeholders.setPlaceholder(moved)
        if let parent = source.parent { writing.folderChanged(parent) }
        if let parent = destination.parent, parent != source.parent { writing.folderChanged(parent) }
        log.info("\(source), refused by the server, renamed here to \(destination): uploading it under the new name")
        writeBack.scheduleUpload(destination, host: writing)
        await showWhatTheRemoteHas(at: source)
        return true
    }

    /// A name a file only here (never on the server) left: what the remote has there shows
    /// again. The local file hid it (a listing's merge keeps the local one), so without a
    /// look the name stayed empty until the next listing — another client's file made there
    /// meanwhile was missing (a 1000-step reference-model run, seed 45). Unanswered: the
    /// next listing tells.
    private func showWhatTheRemoteHas(at id: ItemIdentifier) async {
        guard let parent = id.parent, let remote = try? await provider.item(for: id) else { return }
        // Not over a name made here since (a create, another rename).
        let free = lock.withLock { s in s.dirty[id] == nil && placeholders.loadedState(&s, parent)?[id.name] == nil }
        guard free else { return }
        placeholders.setPlaceholder(remote)
        writing.folderChanged(parent)
    }
}
