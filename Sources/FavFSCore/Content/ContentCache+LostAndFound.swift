import Foundation
import Logging

/// `CACHEDIR/lost+found`: content favfs could not deliver is kept here, never deleted — content
/// files the database does not know (it was deleted or damaged while they were dirty), and the
/// content of uploads that failed for good (denied, too large, refused by the server).
extension ContentCache {
    /// Where content no database record names is kept: `CACHEDIR/lost+found`.
    public var lostAndFound: URL { directory.deletingLastPathComponent().appendingPathComponent("lost+found") }

    /// Content files no record names: an empty one (a crash between create and its first byte)
    /// is removed; any other may be the only copy of something written here (the database was
    /// deleted or damaged while it was dirty), so it is moved to `lostAndFound`, never deleted.
    /// Returns how many files were handled. Called at mount and at unmount.
    @discardableResult
    public func rescueUnknownFiles() -> Int {
        // Without the records, every file would look unknown: leave them all where they are.
        guard let records = try? store.contentByLastUse() else {
            log.error("cannot read the content records: content files are left where they are")
            return 0
        }
        let known = Set(records.map(\.file))
        var handled = 0
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where !known.contains(name) {
            lock.lock()
            let inUse = entries.values.contains { $0.file == name }
            lock.unlock()
            if inUse { continue }
            var st = stat()
            guard lstat(path(name), &st) == 0 else { continue }
            handled += 1
            if st.st_size == 0 { unlink(path(name)); continue }
            try? FileManager.default.createDirectory(at: lostAndFound, withIntermediateDirectories: true)
            let target = lostAndFound.appendingPathComponent("\(stamp)-content-\(name)").path
            if rename(path(name), target) == 0 {
                log.warning("content file \(name) (\(st.st_size) bytes) is not known to the database: kept as \(target)")
            } else {
                log.error("content file \(name) is not known to the database and could not be moved to \(lostAndFound.path): \(String(cString: strerror(errno)))")
            }
        }
        return handled
    }

    /// Keeps the cache file of `id` in `lostAndFound` (a hard link, else a copy; always a copy
    /// when `independentCopy`, for content that stays in use and may change) under a name that
    /// says when and what: `2026-11-24T101500Z docs%2Freport.txt`. Nil when it could not be
    /// kept (the caller must then keep the content where it is).
    func keepInLostAndFound(_ id: ItemIdentifier, independentCopy: Bool = false) -> URL? {
        guard let r = try? store.contentRecord(id) else { return nil }
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        let name = Self.lostAndFoundName(id)
        do {
            try FileManager.default.createDirectory(at: lostAndFound, withIntermediateDirectories: true)
        } catch {
            return nil
        }
        var target = lostAndFound.appendingPathComponent("\(stamp) \(name)")
        var n = 1
        while FileManager.default.fileExists(atPath: target.path) {
            n += 1
            target = lostAndFound.appendingPathComponent("\(stamp) \(n) \(name)")
        }
        let source = path(r.file)
        if !independentCopy && link(source, target.path) == 0 { return target }
        return FileCopy.copy(from: source, to: target.path) ? target : nil
    }

    /// The item's path as one file name (`/` as `%2F`), cut to its last part when the whole
    /// would not fit in a name (255 bytes with the time stamp before it): a file deep in a
    /// tree must be kept too.
    static func lostAndFoundName(_ id: ItemIdentifier) -> String {
        let whole = String(id.rawValue.dropFirst()).replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "/", with: "%2F")
        let room = 200
        guard whole.utf8.count > room else { return whole }
        var tail = Substring(whole)
        while tail.utf8.count > room - 3 { tail = tail.dropFirst() }
        return "..." + tail
    }
}
