import Foundation
import Logging

/// Reading: opens for reading, reads served from the cache file when their bytes are there
/// (on the FUSE thread) or once startProviding brought them, the read-ahead of a sequential
/// reader and the background fill of a random one, a reader moved to a file's newer version
/// (`+NewerVersion`). The cache's storage and its downloads are `ContentCache`'s; this part
/// decides what to ask it for. No state of its own beyond the handles' (`HandleTable`,
/// `OpenFile`).
final class Reading: Sendable, ReportsRemoteErrors {
    let provider: any Provider
    let content: ContentCache
    /// startProviding: the missing bytes of a read, and read-ahead.
    let downloads: Downloads
    let options: DomainOptions
    let placeholders: Placeholders
    /// Asked again for an item whose version changed under a read.
    let enumerations: Enumerations
    let handles: HandleTable
    let tasks: OwnedTasks
    /// Told when a program reads: background work waits for a pause.
    let workingSet: WorkingSet
    /// The next files of a folder a program reads one after another.
    let walkAhead: FileWalkReadAhead
    let log = Logger(label: "favfs.domain")

    init(provider: any Provider, content: ContentCache, downloads: Downloads, options: DomainOptions, placeholders: Placeholders,
         enumerations: Enumerations, handles: HandleTable, tasks: OwnedTasks, workingSet: WorkingSet) {
        self.provider = provider
        self.content = content
        self.downloads = downloads
        self.options = options
        self.placeholders = placeholders
        self.enumerations = enumerations
        self.handles = handles
        self.tasks = tasks
        self.workingSet = workingSet
        walkAhead = FileWalkReadAhead(placeholders: placeholders, content: content, downloads: downloads,
                                      handles: handles, provider: provider, tasks: tasks)
    }

    /// Opens a file for reading. No network: content is fetched by reads. `keepCache` tells the
    /// kernel its page cache of this file is still valid (same version as at the last open).
    func openFile(_ id: ItemIdentifier) throws -> (handle: UInt64, keepCache: Bool) {
        let (found, isDirty) = placeholders.snapshot(id)
        guard let item = found else { throw error(.notFound, id, "no such item") }
        guard item.kind == .file else { throw error(.isAFolder, id, "not a file") }
        let version = Domain.contentVersion(item)
        let entry = try retainForOpen(item, version: version, dirty: isDirty)
        workingSet.foregroundRead(at: Domain.now)
        walkAhead.opened(item)
        return handles.addReader(OpenFile(item: item, entry: entry), as: id, version: version)
    }

    /// The content entry an open uses. A dirty item's cache file is its only copy, whatever
    /// version it is recorded under (`local`). `item` and `dirty` were read before, under the
    /// lock; `retain` runs without it, and an upload's commit may land in between: the dirty
    /// content is then confirmed under a new version, and an entry `retain` made anew (none
    /// was in the table for the commit to update) carries the old one. A write through such a
    /// handle took our own upload for a change at the remote and made a conflict copy of the
    /// user's next edit (fsx on an SMB mount, with the machine busy). So the entry takes the
    /// version memory holds once `retain` returns.
    func retainForOpen(_ item: Item, version: String, dirty wasDirty: Bool) throws -> ContentEntry {
        let id = item.identifier
        let entry = try content.retain(item: item, version: version, asHandle: true, local: wasDirty)
        guard wasDirty else { return entry }
        if let parent = id.parent { placeholders.preload(parent) }
        let reconciled = placeholders.lock.withLock { s -> Bool in
            guard s.dirty[id] == nil, let now = placeholders.cachedItemLocked(&s, id, load: false), now.kind == .file else { return false }
            let confirmed = Domain.contentVersion(now)
            guard confirmed != version else { return false }
            return entry.withLock { es -> Bool in
                guard es.version == version else { return false }
                es.version = confirmed
                return true
            }
        }
        // `retain` may have recorded the entry under the old version over the commit's row.
        if reconciled { content.persist(entry) }
        return entry
    }

    /// The size of the content an open handle reads, nil for an unknown handle.
    func openSize(handle: UInt64) -> Int64? {
        handles.file(handle).map { f in f.entry.withLock { es in es.size } }
    }

    func file(_ handle: UInt64) throws -> OpenFile {
        guard let f = handles.file(handle) else {
            throw ProviderError(.badHandle, remote: provider.remoteDescription, detail: "bad file handle \(handle)")
        }
        return f
    }

    /// Serves a read from the cache file when every byte is present; nil when it must wait for
    /// a download (then call `read`). Starts read-ahead either way. Never touches the network.
    func readIfPresent(handle: UInt64, offset: Int64, size: Int) -> ReadResult? {
        guard let f = try? file(handle) else { return nil }
        let r = offset..<max(offset, min(offset + Int64(size), f.entry.withLock { es in es.size }))
        if r.isEmpty { return ReadResult(fd: f.entry.fd, offset: offset, length: 0) }
        guard f.entry.beginServing(r) else { return nil }
        guard f.startServing() else { f.entry.endServing(); return nil }
        if r.upperBound == f.item.size { walkAhead.readToEnd(f.item.identifier) }
        if let prefetch = f.readAhead(after: r, maxWindow: options.maxReadAhead, minWindow: options.minReadAhead) {
            let entry = f.entry, item = f.item, provider = provider, downloads = downloads
            tasks.start { try? await downloads.provide(entry, item: item, range: prefetch.lowerBound..<prefetch.lowerBound,
                                                       prefetch: prefetch, provider: provider) }
        }
        let entry = f.entry
        return ReadResult(fd: f.entry.fd, offset: offset, length: r.count, done: { entry.endServing() })
    }

    /// Reads through the cache: waits for the missing chunks of this range (startProviding) and
    /// starts read-ahead for a sequential reader. A handle that has served nothing yet follows
    /// the file to its newer version when the remote changed it (`switchToNewerVersion`).
    func read(handle: UInt64, offset: Int64, size: Int) async throws -> ReadResult {
        var f = try file(handle)
        workingSet.foregroundRead(at: Domain.now)
        // The size the kernel was told, when the handle moved to a newer version.
        var toldSize: Int64?
        var switches = 0, evicted = 0
        while true {
            let r = offset..<max(offset, min(offset + Int64(size), f.entry.withLock { es in es.size }))
            let grew = toldSize.map { $0 < f.item.size } ?? false ? Domain.contentVersion(f.item) : nil
            if r.isEmpty { return ReadResult(fd: f.entry.fd, offset: offset, length: 0, grewToVersion: grew) }
            let prefetch = f.readAhead(after: r, maxWindow: options.maxReadAhead, minWindow: options.minReadAhead)
            if f.wantsFill() { startFill(f) }
            do {
                try await downloads.provide(f.entry, item: f.item, range: r, prefetch: evicted == 0 ? prefetch : nil, provider: provider)
            } catch let e as ProviderError where e.kind == .versionChanged {
                if switches < 3, let newer = await switchToNewerVersion(handle, from: f) {
                    switches += 1
                    toldSize = toldSize ?? f.item.size
                    f = newer
                    continue
                }
                await enumerations.refreshItem(f.item.identifier)
                throw e
            } catch let e as ProviderError where e.kind == .noSpace && evicted < 4 {
                // The disk was full for a request this read shared (another reader's, the
                // read-ahead's), which made room around its own bytes: this read's own request
                // makes room around these.
                evicted += 1
                continue
            }
            if f.entry.beginServing(r) {
                guard f.startServing() else {
                    // Moved to a newer version by another read meanwhile.
                    f.entry.endServing()
                    toldSize = toldSize ?? f.item.size
                    f = try file(handle)
                    continue
                }
                if r.upperBound == f.item.size { walkAhead.readToEnd(f.item.identifier) }
                let entry = f.entry
                return ReadResult(fd: f.entry.fd, offset: offset, length: r.count, done: { entry.endServing() },
                                  grewToVersion: grew)
            }
            // A file larger than the cache disk may lose bytes between their arrival and this
            // reply (dropped for another request, `makeRoom`): then they are fetched again.
            evicted += 1
            if evicted == 5 { throw error(.noSpace, f.item.identifier, "the cache disk is too small to hold even this read") }
        }
    }

    // MARK: ahead of the reader

    /// Fetches a whole file in the background, in order, one request at a time so that the
    /// reader's own requests still find free connections. Only files that fit the cache twice.
    func startFill(_ f: OpenFile) {
        let size = f.entry.withLock { es in es.size }
        guard size <= content.limit / 2 else { return }
        let entry = f.entry, item = f.item, provider = provider, content = content, downloads = downloads
        let step = content.maxRequestSize * 2
        content.hold(entry)
        log.debug("random reads on \(item.identifier): fetching all \(size) bytes in the background")
        let started = tasks.start(priority: .utility) {
            defer { content.release(entry, asHandle: false) }
            var offset: Int64 = 0
            while offset < size && !Task.isCancelled {
                let r = offset..<min(offset + step, size)
                do { try await downloads.provide(entry, item: item, range: r, prefetch: nil, provider: provider) }
                catch { return }
                offset = r.upperBound
            }
        }
        if !started { content.release(entry, asHandle: false) }
    }

    /// Before `item` is deleted or replaced remotely: if a handle has it open, every byte of it
    /// is fetched first, so the open descriptors can still read all of it afterwards.
    func keepContentForOpenHandles(_ item: Item) async throws {
        guard item.kind == .file, let e = content.openEntry(item.identifier) else { return }
        let size = e.withLock { es in es.size }
        guard size > 0 else { return }
        try await downloads.provide(e, item: item, range: 0..<size, prefetch: nil, provider: provider)
    }

    /// After a handle closed (its writes recorded): its orphan goes with the last handle, its
    /// content may be evicted.
    func release(_ f: OpenFile) {
        if f.entry.withLock({ es in es.deleted }) { handles.dropOrphan(ifLastHandleOf: f.entry) }
        content.release(f.entry, asHandle: true)
        // --cache-size holds once a file is closed (an open file is never evicted), not only
        // at the next download.
        downloads.eviction.schedule()
    }
}
