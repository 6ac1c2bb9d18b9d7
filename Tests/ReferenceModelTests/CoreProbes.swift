@testable import FavFSCore
import Synchronization

/// The only places the harness looks inside the core (everything else goes through the public
/// API the FUSE bridge uses). When `Domain` is split, update these and nothing else.
extension Domain {
    /// No upload running or waiting out its close's grace, no listing in flight or being
    /// saved: the core is at rest.
    /// No download running or still recording what it fetched (a content entry held by
    /// anything but open handles).
    var isQuietForModel: Bool {
        let domainQuiet = lock.withLock { s in !s.dirty.anyUploading && s.refreshes.isEmpty && s.listingSaves.isEmpty }
        let contentQuiet = content.table.withLock { t in t.entries.values.allSatisfy { e in e.withLock { $0.users == $0.openHandles } } }
        return domainQuiet && contentQuiet && writing.closesInGrace.load(ordering: .relaxed) == 0
    }

    /// The item a handle writes to now (a conflict copy's name, after its edit was handed over).
    func handleItemForModel(_ handle: UInt64) -> ItemIdentifier? {
        handles.file(handle).map { f in f.entry.id }
    }

    /// What the poller does for one folder of its working set: list it again and apply what
    /// changed (the harness calls it right after another client changed that folder).
    func pollForModel(_ folder: ItemIdentifier) async {
        await poller.revalidate(folder, round: Poller.fullListingEvery, host: self)
    }

    /// The folders whose listings the core holds in memory (the poller's candidates).
    var loadedFoldersForModel: [ItemIdentifier] { lock.withLock { $0.namespace.loadedFolders } }
}
