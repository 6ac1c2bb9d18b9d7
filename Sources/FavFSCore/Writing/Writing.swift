import Foundation
import Logging
import Synchronization

/// Changes made through the mount to files' content: they land in the cache file and make
/// the item dirty (its journal row first, `markDirty`); the last close (`finishWriting`) or an
/// fsync's quiet time (`uploadWhenQuiet`) hands it to write-back. Creating, opening for
/// writing, writing, truncating and setting times are `+Files`; namespace changes (mkdir,
/// unlink, rmdir, rename) are `NamespaceChanges`'. The host write-back's uploads ask for folder
/// times, kept times and the writer.
final class Writing: WriteBackHost, ReportsRemoteErrors {
    let provider: any Provider
    let content: ContentCache
    let options: DomainOptions
    /// The placeholders a change writes, and `Domain.lock` (the dirty set) through them.
    let placeholders: Placeholders
    /// Opens a file for writing as for reading first; a handle's end.
    let reading: Reading
    /// A name is created only where a verified listing says it is free.
    let enumerations: Enumerations
    let handles: HandleTable
    let writeBack: WriteBack
    let tasks: OwnedTasks
    /// Closes whose upload waits out `uploadCloseGrace` now (`uploadAfterClose`).
    let closesInGrace = Atomic<Int>(0)
    /// The remote's largest file (`WritableProvider.maxFileSize`), read once: checked on every write.
    let maxFileSize: Int64?
    let log = Logger(label: "favfs.domain")

    init(provider: any Provider, content: ContentCache, options: DomainOptions, placeholders: Placeholders,
         reading: Reading, enumerations: Enumerations, handles: HandleTable, writeBack: WriteBack, tasks: OwnedTasks) {
        self.provider = provider
        self.content = content
        self.options = options
        self.placeholders = placeholders
        self.reading = reading
        self.enumerations = enumerations
        self.handles = handles
        self.writeBack = writeBack
        self.tasks = tasks
        maxFileSize = (provider as? any WritableProvider)?.maxFileSize
    }

    var lock: Guarded<DomainState> { placeholders.lock }
    var downloads: Downloads { reading.downloads }
    var store: PlaceholderStore { placeholders.store }

    /// The provider's write side, or EROFS.
    func writer(_ id: ItemIdentifier) throws -> any WritableProvider {
        guard !options.readOnly, let w = provider as? any WritableProvider else {
            throw error(.readOnly, id, "this mount is read-only")
        }
        return w
    }

    var isWritable: Bool { !options.readOnly && provider is any WritableProvider }

    /// Refuses a size the remote would not store (`maxFileSize`), before anything is written.
    func checkFileSize(_ id: ItemIdentifier, _ size: Int64) throws {
        guard let limit = maxFileSize, size > limit else { return }
        throw error(.tooLarge, id, "\(provider.remoteDescription) stores files of at most \(limit) bytes; this write would make it \(size)")
    }

    // MARK: placeholders changed here

    /// Updates the in-memory placeholder of a file being written (size, mtime); the store
    /// follows on close.
    func touch(_ id: ItemIdentifier, size: Int64) {
        guard !id.isRoot else { return }
        let now = Domain.now
        lock.withLock { s in s.namespace.update(id) { $0.size = size; $0.modified = now } }
    }

    /// A folder's mtime (and so ctime) moves when an entry is created, removed or renamed in
    /// it, as POSIX says and file managers expect; kept in memory until the next listing of
    /// its parent brings the server's.
    func folderChanged(_ folder: ItemIdentifier) {
        let now = Timestamp(Domain.now)
        lock.withLock { s in s.namespace.update(folder) { $0.modifiedTime = now } }
    }

    /// After the bytes of a change landed in the cache file: an upload that began between
    /// `markDirty` (journal first, for crashes) and the write may not have read them, so it must
    /// not count as covering this change. Said for the item `entry` is the content of now, read
    /// under the same lock (a rename or a conflict copy's hand-over may have moved it since the
    /// change was marked). Returns it.
    @discardableResult
    func changeLanded(in entry: ContentEntry) -> ItemIdentifier {
        lock.withLock { s in
            let id = entry.id
            s.dirty.landed(id)
            return id
        }
    }

    func isDirty(_ id: ItemIdentifier) -> Bool { lock.withLock { s in s.dirty.isDirty(id) } }

    // MARK: handing changes to write-back

    func keepTime(_ id: ItemIdentifier, version: String, time: Timestamp, because e: ProviderError) {
        if lock.withLock({ s in s.namespace.keepTime(id, version: version, time: time) }) {
            log.notice("\(provider.remoteDescription) does not keep modification times set here (\(e.detail)): favfs keeps them in its cache dir and shows them while a file stays unchanged at the server; another computer, or a new cache dir, sees the server's times (rsync --size-only or --checksum then avoid sending such files again)")
        }
        do { try store.keepTime(.init(id: id, version: version, time: time)) }
        catch { log.warning("cannot record the time set on \(id) in the cache dir: \(error); it shows until unmount") }
    }

    /// After the last writable handle of an item closes: record its state and upload.
    func finishWriting(_ f: OpenFile) {
        let (id, deleted) = f.entry.withLock { es in (es.id, es.deleted || es.stale) }
        if deleted { return }
        // The content record and the placeholder (size, mtime) in one transaction.
        placeholders.whileNoPlaceholderIsWritten { content.persist(f.entry, with: placeholders.cachedItem(id)) }
        let stillOpen = handles.hasWriter(of: f.entry)
        if !stillOpen { writeBack.endStream(id, length: f.entry.withLock { es in es.size }) }
        if !stillOpen && isDirty(id) { uploadAfterClose(id) }
    }

    /// The upload a last close starts, `uploadCloseGrace` later: a program that closes a file
    /// and at once deletes it (sqlite's rollback journal, at every commit) sends nothing, where
    /// the upload started first made the unlink wait for it and then delete it at the server.
    /// The same spell of changes only (`incarnation`): a file deleted and made again meanwhile
    /// is the later close's to send.
    func uploadAfterClose(_ id: ItemIdentifier) {
        let grace = options.uploadCloseGrace
        guard grace > 0, let incarnation = lock.withLock({ s in s.dirty[id]?.incarnation }) else {
            return writeBack.scheduleUpload(id, host: self)
        }
        closesInGrace.add(1, ordering: .relaxed)
        let started = tasks.start(priority: .utility) { [self] in
            defer { closesInGrace.subtract(1, ordering: .relaxed) }
            try? await Task.sleep(nanoseconds: UInt64(grace * 1e9))
            // Unmounting: `drainUploads` sends every dirty item itself.
            if Task.isCancelled { return }
            // Renamed meanwhile (its parent folder, in a rename that began before this close):
            // its upload is due under the name it has now.
            if let now = lock.withLock({ s in s.dirty.name(of: incarnation, lastKnown: id) }) { writeBack.scheduleUpload(now, host: self) }
        }
        if !started { closesInGrace.subtract(1, ordering: .relaxed) }
    }

    /// fsync: the cache file and its journal row on this machine's disk; the upload follows
    /// once the file goes quiet (`uploadWhenQuiet`). With `fsyncWaitsForRemote`, fsync returns
    /// only once the remote confirmed the content.
    func sync(handle: UInt64) async throws {
        let f = try reading.file( handle)
        guard f.writable else { return }
        let id = f.entry.withLock { es in es.id }
        if fdatasync(f.entry.fd) != 0 {
            throw error(.localIO, id, "cannot sync the cache file to disk: \(String(cString: strerror(errno)))")
        }
        // A deleted file's content lives only as long as its descriptors: nothing to upload.
        if f.entry.withLock({ es in es.deleted }) { return }
        let dirtyNow = isDirty(id)
        // A dirty file's content is its whole cache file, whatever its record says
        // (`ContentCache.retain(local:)`): the record is written at the close (and was at the
        // first write), not at every commit of a database.
        if !dirtyNow || !f.entry.withLock({ es in es.recorded }) { content.persist(f.entry) }
        guard dirtyNow else { return }
        if options.fsyncWaitsForRemote {
            writeBack.scheduleUpload(id, host: self)
            try await writeBack.waitForUpload(id, untilClean: false)
            return
        }
        // The journal row once per dirty spell: a database's hundredth commit syncs its cache
        // file only (a dirty file's content is the cache file, whatever its record says).
        if lock.withLock({ s in s.dirty.needsDurableJournal(id) }) {
            do {
                try store.makeDurable()
            } catch where PlaceholderStore.isDiskFull(error) && reading.downloads.eviction.evictForSpace(needed: 1 << 20, except: id, for: "to sync the journal of \(id)") > 0 {
                // The checkpoint writes into the database file: clean content makes room.
                do { try store.makeDurable() } catch { throw self.error(.noSpace, id, "cannot sync the change journal to disk: \(error)") }
            } catch {
                throw self.error(PlaceholderStore.isDiskFull(error) ? .noSpace : .localIO, id, "cannot sync the change journal to disk: \(error)")
            }
            lock.withLock { s in s.dirty.journalMadeDurable(id) }
        }
        uploadWhenQuiet(id)
    }

    /// fsync of a folder: the changes to its entries made here survive a power cut. A name
    /// changed at the remote was there before the change returned; a file not uploaded yet
    /// (made or removed here) is a journal row, which a commit keeps across the daemon dying
    /// but not across a power cut until a checkpoint has synced it. Off the cooperative pool:
    /// the checkpoint waits for SQLite's writer.
    func syncFolder() async throws {
        let store = self.store
        do {
            try await BlockingWork.run { try store.makeDurable() }
        } catch {
            let full = PlaceholderStore.isDiskFull(error)
            throw ProviderError(full ? .noSpace : .localIO, detail: "cannot sync the change journal to disk: \(error)")
        }
    }

    /// Uploads `id` once it went `uploadQuietTime` without a change since this call, or once
    /// `uploadMaxDelay` passed since it became dirty: a database fsyncing a hundred times a
    /// second is uploaded once, soon after it stops. Each call's wait ends on its own; a later
    /// change leaves the upload to the fsync (or close) after it.
    func uploadWhenQuiet(_ id: ItemIdentifier) {
        guard let (generation, since) = lock.withLock({ s in s.dirty[id].map { ($0.generation, $0.journal.since) } }) else { return }
        let quiet = options.uploadQuietTime, maxDelay = options.uploadMaxDelay
        tasks.start(priority: .utility) { [self] in
            try? await Task.sleep(nanoseconds: UInt64(max(0, quiet) * 1e9))
            if Task.isCancelled { return }
            let due = lock.withLock { s in
                s.dirty.quietUploadDue(id, generation: generation, since: since, now: Domain.now, maxDelay: maxDelay)
            }
            if due { writeBack.scheduleUpload(id, host: self) }
        }
    }

    /// Closes a handle: the last writable handle of a dirty item starts its upload.
    func closeFile(_ handle: UInt64) {
        guard let f = handles.remove(handle) else { return }
        if f.writable { finishWriting(f) }
        reading.release(f)
    }
}

/// `markDirty` through a handle whose file is gone at the remote and whose name is a folder now.
struct NameIsNotAFileNow: Error {}

/// The content a handle writes answers to another name now (`Writing.markDirty`).
struct ItemMovedMeanwhile: Error {
    let now: ItemIdentifier
}
