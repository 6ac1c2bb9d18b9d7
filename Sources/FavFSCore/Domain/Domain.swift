import Foundation
import Logging

/// One mounted remote, FUSE-agnostic: placeholders answer lookups, attributes and listings
/// without the network while fresh; enumerators refresh them; open files read through the
/// content cache (startProviding on a miss). Everything here is callable from any thread.
public final class Domain: Sendable, ReportsRemoteErrors {
    /// The background work this core started (uploads, quiet-time waits, read-ahead, listings):
    /// `stopBackgroundWork` cancels it and waits for it before unmount.
    let tasks = OwnedTasks()
    /// The placeholders in memory and in the store, moved between them off the lock; it holds
    /// the store, `Domain.lock` and the handle table.
    let placeholders: Placeholders
    /// The enumerators: listings of folders, shared while in flight, merged and saved.
    let enumerations: Enumerations
    /// Listings started ahead of a program walking a tree, or after a folder was shown.
    let directoryReadAhead: DirectoryReadAhead
    /// Opens for reading and reads: startProviding (`downloads`), read-ahead, a reader moved
    /// to a newer version.
    let reading: Reading
    /// Content changes made here: the cache file, the journal, handing them to write-back
    /// (`writeBack`, which uploads them).
    let writing: Writing
    /// mkdir, symlink, unlink, rmdir, rename: at the remote first, then the placeholders.
    let namespaceChanges: NamespaceChanges
    /// `copy_file_range` of a whole file made at the remote.
    let serverSideCopy: ServerSideCopy
    /// Items' states and the mount's, for `favfs status` and the extended attributes.
    let itemStatus: ItemStatus
    /// `favfs evict`: the content of an item and all below it freed.
    let subtreeEviction: SubtreeEviction
    /// What the user pinned and the downloads that keep it here (its own part, own tasks).
    let pinning: Pinning
    /// Told of every change a listing finds at the remote (the bridge tells the kernel), a
    /// batch at a time, never empty.
    public let remoteChanges = Feed<[RemoteChange]>()
    /// Told of every folder listed for a program (freedesktop thumbnails).
    public let foldersShown = Feed<FolderShown>()
    /// Told of what the user must know (a conflict copy, a refused upload, the remote gone
    /// and back): the desktop notifier subscribes. Published outside `lock`.
    public let userEvents = Feed<UserEvent>()

    // What the parts hold, named here for the façade's extensions, the bridge and the tests.
    public var provider: any Provider { enumerations.provider }
    public var content: ContentCache { reading.content }
    public var options: DomainOptions { enumerations.options }
    public var store: PlaceholderStore { placeholders.store }
    /// The namespace in memory, the dirty set and the listings in flight (`DomainState`),
    /// reachable only under this lock; taken by every FUSE request. No SQLite call waits for the
    /// writer under it (checked in debug builds: `StoreWitness`; docs/architecture.md).
    var lock: Guarded<DomainState> { placeholders.lock }
    /// Open files, the version each item had when last opened, orphans (see `HandleTable`).
    var handles: HandleTable { placeholders.handles }
    /// startProviding into `content`: reads, opens for writing, pinned content.
    var downloads: Downloads { reading.downloads }
    /// stopProviding by policy: the LRU, a full cache disk, unmount.
    var eviction: Eviction { downloads.eviction }
    /// Uploads of what changed here: the upload loop, commits, conflict copies, streams.
    var writeBack: WriteBack { writing.writeBack }
    /// Folders in recent use, polled folders' stamps, when a program last read: what
    /// background work goes by.
    var workingSet: WorkingSet { enumerations.workingSet }
    var log: Logger { Self.logger }
    private static let logger = Logger(label: "favfs.domain")

    public init(provider: any Provider, store: PlaceholderStore, content: ContentCache, options: DomainOptions) {
        let pins = PinSet((try? store.pins()) ?? [])
        let downloads = Downloads(cache: content, eviction: Eviction(cache: content, pins: pins))
        let handles = HandleTable(), workingSet = WorkingSet()
        let namespace = Namespace(root: (try? store.item(.rootContainer))?.item ?? Item(identifier: .rootContainer, kind: .folder),
                                  keptTimes: KeptModifiedTimes((try? store.keptTimes()) ?? []))
        placeholders = Placeholders(store: store, lock: Guarded("Domain.lock", DomainState(namespace: namespace)), handles: handles)
        enumerations = Enumerations(provider: provider, options: options, placeholders: placeholders,
                                    tasks: tasks, workingSet: workingSet, userEvents: userEvents)
        directoryReadAhead = DirectoryReadAhead(options: options, placeholders: placeholders, enumerations: enumerations,
                                                tasks: tasks, workingSet: workingSet)
        reading = Reading(provider: provider, content: content, downloads: downloads, options: options, placeholders: placeholders,
                          enumerations: enumerations, handles: handles, tasks: tasks, workingSet: workingSet)
        pinning = Pinning(pins: pins, store: store, content: content, downloads: downloads, provider: provider)
        let writeBack = WriteBack(provider: provider, placeholders: placeholders, content: content, options: options,
                                  handles: handles, tasks: tasks, userEvents: userEvents)
        writing = Writing(provider: provider, content: content, options: options, placeholders: placeholders,
                          reading: reading, enumerations: enumerations, handles: handles, writeBack: writeBack, tasks: tasks)
        namespaceChanges = NamespaceChanges(provider: provider, content: content, placeholders: placeholders,
                                            enumerations: enumerations, writing: writing, pinning: pinning)
        serverSideCopy = ServerSideCopy(provider: provider, content: content, placeholders: placeholders,
                                        handles: handles, writing: writing)
        itemStatus = ItemStatus(provider: provider, content: content, placeholders: placeholders, pinning: pinning, writeBack: writeBack,
                                writing: writing, enumerations: enumerations)
        subtreeEviction = SubtreeEviction(provider: provider, store: store, content: content, pinning: pinning)
    }

    static var now: Double { Date().timeIntervalSince1970 }

    // MARK: connecting

    /// Asks the remote for its root. Fails when the remote refuses us (wrong credentials, no such
    /// folder) or is unreachable with nothing cached; succeeds offline when placeholders exist.
    /// `timeout` (seconds, 0: none) bounds the whole question (`Enumerations.connect`).
    public func connect(timeout: Double = 0) async throws -> Reachability {
        try await enumerations.connect(timeout: timeout)
    }

    /// Lists the root in the background right after mounting (or revalidates its placeholders
    /// when stale), so the first `ls` or open in the mount (a file manager shows the root at
    /// once) finds it ready instead of waiting for the server: on a fresh mount with the
    /// server's disk cold, the first open took 10–17 ms, 2 ms with the root listed.
    /// Owned by `tasks`; nil once the unmount began.
    @discardableResult
    public func listRootAhead() -> Task<Void, Error>? {
        tasks.run(priority: .utility) { [self] in _ = try? await enumerations.folderState(.rootContainer, host: self) }
    }

    // MARK: placeholders

    /// The placeholder of `id`, from memory or the store; nil if never seen. No network.
    public func cachedItem(_ id: ItemIdentifier) -> Item? { placeholders.cachedItem(id) }

    /// Finds `name` in `parent`: from the placeholder listing while fresh (a name not in a fresh
    /// listing does not exist), else after enumerating the folder.
    public func lookup(_ parent: ItemIdentifier, _ name: String) async throws -> Item {
        try await enumerations.lookup(parent, name, host: self)
    }

    /// The children of a folder, in name order (a readdir: its subfolders are listed next).
    public func children(of folder: ItemIdentifier) async throws -> [Item] {
        let state = try await enumerations.folderState(folder, host: self)
        directoryReadAhead.prefetchSubfolders(of: state, host: self)
        directoryReadAhead.readAheadSiblings(of: folder, host: self)
        foldersShown.publish(FolderShown(folder: folder, items: state.items))
        return state.items
    }

    /// Waits until every listing answered so far is in the store.
    public func waitForListingSaves() async { await enumerations.waitForListingSaves() }

    // MARK: content

    /// The version content is cached under: the ETag, or size and mtime where there is none.
    static func contentVersion(_ item: Item) -> String {
        item.contentTag ?? "size=\(item.size) mtime=\(item.modified ?? 0)"
    }

    /// Closes a handle. The last writable handle of a dirty item starts its upload.
    public func closeFile(_ handle: UInt64) {
        writing.closeFile(handle)
    }

    /// Opens a file for reading. No network: content is fetched by reads. `keepCache` tells the
    /// kernel its page cache of this file is still valid (same version as at the last open).
    public func openFile(_ id: ItemIdentifier) throws -> (handle: UInt64, keepCache: Bool) { try reading.openFile(id) }

    /// The size of the content an open handle reads, nil for an unknown handle.
    public func openSize(handle: UInt64) -> Int64? { reading.openSize(handle: handle) }

    /// Serves a read from the cache file when every byte is present; nil when it must wait for
    /// a download (then call `read`). Starts read-ahead either way. Never touches the network.
    public func readIfPresent(handle: UInt64, offset: Int64, size: Int) -> ReadResult? {
        reading.readIfPresent(handle: handle, offset: offset, size: size)
    }

    /// Reads through the cache: waits for the missing chunks of this range (startProviding) and
    /// starts read-ahead for a sequential reader (`Reading.read`).
    public func read(handle: UInt64, offset: Int64, size: Int) async throws -> ReadResult {
        try await reading.read(handle: handle, offset: offset, size: size)
    }

    /// After `id` was deleted or replaced here, the inode that named it is called `orphan`:
    /// the deleted content of its open handles answers to that name until the last close.
    public func adoptOrphan(_ orphan: ItemIdentifier, was id: ItemIdentifier) {
        handles.adoptOrphan(orphan, was: id)
    }

    /// The content version of `id`'s placeholder now (nil: none, or not a file). No network.
    public func contentVersion(of id: ItemIdentifier) -> String? {
        cachedItem(id).flatMap { $0.kind == .file ? Self.contentVersion($0) : nil }
    }

    // MARK: status

    /// Space at the remote (asked at most once a minute); nil when the remote does not say.
    public func quota() async -> Quota? { await itemStatus.quota() }

    /// An item's state in words, for `favfs status PATH`: folder, placeholder (no content
    /// here), partial N%, materialized, or dirty (changed here, upload pending or failed).
    public func state(of id: ItemIdentifier) -> String? { itemStatus.state(of: id) }

    public func status() -> MountStatus { itemStatus.status() }

    /// Ends the mount: evicts all content that is not pinned unless `keepContent`.
    /// Cancels the background work (uploads still running stay dirty in the journal, for the
    /// next mount) and waits for it, at most `seconds`. Returns how many tasks were still
    /// running then. Call before `shutdown`, after `drainUploads`.
    public func stopBackgroundWork(within seconds: Double) async -> Int {
        // The provider's change feed (a long poll) is background work too.
        await (provider as? any FolderWatchingProvider)?.stopWatching()
        async let pinningLeft = pinning.stop(within: seconds)
        async let evictionLeft = eviction.stop(within: seconds)
        let left = await tasks.shutdown(within: seconds) + pinningLeft + evictionLeft
        if left > 0 { log.warning("\(left) background task(s) still running after \(seconds) s; unmounting anyway") }
        return left
    }

    public func shutdown(keepContent: Bool) -> (files: Int, bytes: Int64) {
        // Read-ahead still running would keep its content (in use) out of the eviction.
        downloads.stop(timeout: 5)
        let evicted = keepContent ? (0, 0) : eviction.evictAll()
        // Placeholders of the last listings: the next mount browses them (a save takes ms).
        enumerations.waitForListingSaves(within: 10)
        store.close()
        return evicted
    }
}
