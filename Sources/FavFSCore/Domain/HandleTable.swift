import Foundation

/// The open files of a mount: each handle number with its `OpenFile`, the content version each
/// item had when last opened (the same version keeps the kernel's page cache), and the orphans
/// (files deleted or replaced here while open, under the name their inode now has).
///
/// Its own lock, taken with `Domain.lock` held or not; inside it only `ContentEntry.lock` is
/// taken (an orphan's size and state), never anything above.
final class HandleTable: Sendable {
    private struct State {
        var files: [UInt64: OpenFile] = [:]
        var next: UInt64 = 1
        var openedVersions: [ItemIdentifier: String] = [:]
        var orphans: [ItemIdentifier: Orphan] = [:]
    }

    private let state = Guarded("HandleTable", State())

    // MARK: handles

    /// Registers `file` under a new handle number.
    func add(_ file: OpenFile) -> UInt64 {
        state.withLock { s in
            let h = s.next
            s.next += 1
            s.files[h] = file
            return h
        }
    }

    /// Registers a file opened for reading as `id` at content version `version`; `keepCache`
    /// when the last open of `id` saw the same version.
    func addReader(_ file: OpenFile, as id: ItemIdentifier, version: String) -> (handle: UInt64, keepCache: Bool) {
        state.withLock { s in
            let h = s.next
            s.next += 1
            s.files[h] = file
            let keep = s.openedVersions[id] == version
            s.openedVersions[id] = version
            return (h, keep)
        }
    }

    func file(_ handle: UInt64) -> OpenFile? { state.withLock { $0.files[handle] } }

    func remove(_ handle: UInt64) -> OpenFile? { state.withLock { $0.files.removeValue(forKey: handle) } }

    /// Puts `new` under `handle` if `old` is still there; false otherwise.
    func replace(_ handle: UInt64, ifStill old: OpenFile, with new: OpenFile) -> Bool {
        state.withLock { s in
            guard s.files[handle] === old else { return false }
            s.files[handle] = new
            return true
        }
    }

    /// Puts the reader `new` under `handle` in place of `old` and records the version it reads
    /// as `id`'s last opened one (the kernel's pages of `id` are filled from it from now on).
    func replaceReader(_ handle: UInt64, _ old: OpenFile, with new: OpenFile, as id: ItemIdentifier, version: String) -> Bool {
        state.withLock { s in
            guard s.files[handle] === old else { return false }
            s.files[handle] = new
            s.openedVersions[id] = version
            return true
        }
    }

    /// Every open file, at this instant.
    var all: [OpenFile] { state.withLock { Array($0.files.values) } }

    /// How many handles have `entry` open.
    func count(of entry: ContentEntry) -> Int {
        state.withLock { $0.files.values.reduce(0) { $0 + ($1.entry === entry ? 1 : 0) } }
    }

    /// True when a writable handle has `entry` open.
    func hasWriter(of entry: ContentEntry) -> Bool {
        state.withLock { $0.files.values.contains { $0.writable && $0.entry === entry } }
    }

    /// The next open of `id` must not keep the kernel's page cache (its content changed here).
    func forgetOpenedVersion(_ id: ItemIdentifier) {
        _ = state.withLock { $0.openedVersions.removeValue(forKey: id) }
    }

    // MARK: orphans

    /// The open file whose entry was deleted under `id` and not yet adopted becomes the orphan
    /// named `orphan` (an earlier file of the same name may still be open too).
    func adoptOrphan(_ orphan: ItemIdentifier, was id: ItemIdentifier) {
        state.withLock { s in
            let adopted = s.orphans.values.map { ObjectIdentifier($0.entry) }
            guard let f = s.files.values.first(where: { f in
                !adopted.contains(ObjectIdentifier(f.entry)) && f.entry.withLock { es in es.deleted && es.id == id }
            }) else { return }
            var item = f.item
            item.identifier = orphan
            s.orphans[orphan] = Orphan(item: item, entry: f.entry)
        }
    }

    /// The orphan's item as its handles see it (its size is the cache file's).
    func orphanItem(_ id: ItemIdentifier) -> Item? {
        state.withLock { s in
            guard let o = s.orphans[id] else { return nil }
            var item = o.item
            item.size = o.entry.withLock { es in es.size }
            return item
        }
    }

    /// Sets an orphan's modification time; nil when `id` is no orphan.
    func setOrphanModified(_ id: ItemIdentifier, _ time: Timestamp) -> Item? {
        state.withLock { s in
            guard s.orphans[id] != nil else { return nil }
            s.orphans[id]!.item.modifiedTime = time
            return s.orphans[id]!.item
        }
    }

    /// The orphan of `entry` goes once no handle has it open.
    func dropOrphan(ifLastHandleOf entry: ContentEntry) {
        state.withLock { s in
            guard !s.files.values.contains(where: { $0.entry === entry }) else { return }
            for (id, o) in s.orphans where o.entry === entry { s.orphans[id] = nil }
        }
    }
}

/// A file deleted or replaced here while open: POSIX keeps it usable through its descriptors
/// (`fstat`, `pread`, `pwrite`, `ftruncate`) until the last close. Its content is the cache
/// file those handles hold, made whole before the remote delete; it is never uploaded.
struct Orphan {
    var item: Item
    let entry: ContentEntry
}
