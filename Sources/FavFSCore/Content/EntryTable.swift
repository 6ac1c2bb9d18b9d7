import Foundation

/// What `ContentCache.lock` guards: the content entries in use and what is on its way out.
struct EntryTable {
    var entries: [ItemIdentifier: ContentEntry] = [:]
    /// Items whose record and cache file are being deleted outside the lock (eviction,
    /// removal): `retain` treats their record as gone, so it never opens a file going away.
    var recordsGoing: Set<ItemIdentifier> = []
    /// Entries a newer version replaced while in use (stale), until their last user goes: they
    /// follow their file's renames and deletion here, so a handle on one knows whether its
    /// file was deleted (its writes then stay private) or is still there at another version.
    var superseded: [ContentEntry] = []
    /// The name of the next new cache file (numbers, never reused).
    var nextFile: Int64
}
