import Foundation
import FavFSCore
import Logging

/// inotify on the local provider's folders that the mount has in use: one descriptor, one
/// thread reading it, one watch per folder. Any name added, removed, renamed or written in a
/// watched folder reports that folder; the domain lists it again.
final class LocalFolderWatcher: @unchecked Sendable {
    private let lock = NSLock()
    private var fd: Int32 = -1
    private var folderOfWatch: [Int32: ItemIdentifier] = [:]
    private var watchOfFolder: [ItemIdentifier: Int32] = [:]
    private var onChange: (@Sendable (ItemIdentifier) -> Void)?
    private let log = Logger(label: "favfs.local.watch")

    /// What a listing would show differently: names in and out, content and attributes.
    private static let mask: UInt32 = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE
                                              | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF) | UInt32(IN_ONLYDIR)

    func start(_ handler: @escaping @Sendable (ItemIdentifier) -> Void) {
        let started: Int32? = lock.withLock {
            onChange = handler
            guard fd < 0 else { return nil }
            fd = inotify_init1(Int32(IN_CLOEXEC))
            return fd
        }
        guard let started else { return }
        guard started >= 0 else {
            log.warning("inotify is not available (\(String(cString: strerror(errno)))): changes are found by polling only")
            return
        }
        let t = Thread { [self] in readEvents(started) }
        t.name = "favfs-inotify"
        t.start()
    }

    func watch(_ folder: ItemIdentifier, path: String) {
        lock.withLock {
            guard fd >= 0, watchOfFolder[folder] == nil else { return }
            let wd = inotify_add_watch(fd, path, Self.mask)
            guard wd >= 0 else { return }   // gone already, or the watch limit: the poller covers it
            folderOfWatch[wd] = folder
            watchOfFolder[folder] = wd
        }
    }

    func watch(only folders: Set<ItemIdentifier>, path: (ItemIdentifier) -> String) {
        let current = lock.withLock { Set(watchOfFolder.keys) }
        lock.withLock {
            for f in current.subtracting(folders) {
                if let wd = watchOfFolder.removeValue(forKey: f) {
                    inotify_rm_watch(fd, wd)
                    folderOfWatch[wd] = nil
                }
            }
        }
        for f in folders.subtracting(current) { watch(f, path: path(f)) }
    }

    private func readEvents(_ fd: Int32) {
        let size = 64 << 10
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, size)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            var changed = Set<ItemIdentifier>()
            var overflow = false
            var at = 0
            while at + MemoryLayout<inotify_event>.size <= n {
                let event = buffer.load(fromByteOffset: at, as: inotify_event.self)
                at += MemoryLayout<inotify_event>.size + Int(event.len)
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { overflow = true; continue }
                let folder: ItemIdentifier? = lock.withLock {
                    let f = folderOfWatch[event.wd]
                    if event.mask & UInt32(IN_IGNORED) != 0, let f {
                        folderOfWatch[event.wd] = nil
                        if watchOfFolder[f] == event.wd { watchOfFolder[f] = nil }
                    }
                    return f
                }
                guard let folder else { continue }
                // The folder itself went: its parent's listing says so.
                if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                    if let parent = folder.parent { changed.insert(parent) }
                } else if event.mask & UInt32(IN_IGNORED) == 0 {
                    changed.insert(folder)
                }
            }
            if overflow { changed.formUnion(lock.withLock { Set(watchOfFolder.keys) }) }
            guard let handler = lock.withLock({ onChange }) else { continue }
            for f in changed { handler(f) }
        }
    }
}

extension LocalProvider: FolderWatchingProvider {
    public func startWatching(_ onChange: @escaping @Sendable (ItemIdentifier) -> Void) { watcher.start(onChange) }
    public func watch(only folders: Set<ItemIdentifier>) { watcher.watch(only: folders, path: path) }
    public func watch(_ folder: ItemIdentifier) { watcher.watch(folder, path: path(folder)) }
}
