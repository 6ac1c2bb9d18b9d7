import CLinux
import Foundation
import Logging

/// `CACHEDIR/lost+found`: content favfs could not deliver is kept here, never deleted — content
/// files the database does not know (it was deleted or damaged while they were dirty), and the
/// content of uploads that failed for good (denied, too large, refused by the server).
public struct LostAndFound: Sendable {
    public let directory: URL
    private let log = Logger(label: "favfs.content")

    init(directory: URL) { self.directory = directory }

    /// A time stamp for a name here: `2026-11-24T101500Z` (no `:`, which some tools refuse).
    static func stamp() -> String {
        ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
    }

    /// The files of the cache folder `folder` not in `known` (the names the records give) nor
    /// `inUse`: an empty one (a crash between create and its first byte) is removed; any other
    /// may be the only copy of something written here, so it is moved here, never deleted.
    /// Returns how many files were handled.
    func rescueUnknownFiles(in folder: String, known: Set<String>, inUse: (String) -> Bool) -> Int {
        var handled = 0
        let stamp = Self.stamp()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !known.contains(name) {
            if inUse(name) { continue }
            let path = folder + "/" + name
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            handled += 1
            if st.st_size == 0 { unlink(path); continue }
            takeUnknown(path, name: name, size: Int64(st.st_size), stamp: stamp)
        }
        return handled
    }

    /// Moves the content file at `source` (`name` in the cache, `size` bytes), which no record
    /// names, here as `STAMP-content-NAME`, and says so in the log.
    func takeUnknown(_ source: String, name: String, size: Int64, stamp: String) {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let target = directory.appendingPathComponent("\(stamp)-content-\(name)").path
        if rename(source, target) == 0 {
            log.warning("content file \(name) (\(size) bytes) is not known to the database: kept as \(target)")
        } else {
            log.error("content file \(name) is not known to the database and could not be moved to \(directory.path): \(String(cString: strerror(errno)))")
        }
    }

    /// Keeps the file at `source`, the content of `id`, here (a hard link, else a copy; always
    /// a copy when `independentCopy`, for content that stays in use and may change) under a
    /// name that says when and what: `2026-11-24T101500Z docs%2Freport.txt`. Nil when it could
    /// not be kept (the caller must then keep the content where it is).
    func keep(_ source: String, of id: ItemIdentifier, independentCopy: Bool) -> URL? {
        let stamp = Self.stamp()
        let name = Self.name(id)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            return nil
        }
        var target = directory.appendingPathComponent("\(stamp) \(name)")
        var n = 1
        while FileManager.default.fileExists(atPath: target.path) {
            n += 1
            target = directory.appendingPathComponent("\(stamp) \(n) \(name)")
        }
        if !independentCopy && link(source, target.path) == 0 { return target }
        return FileCopy.copy(from: source, to: target.path) ? target : nil
    }

    /// The item's path as one file name (`/` as `%2F`), cut to its last part when the whole
    /// would not fit in a name (255 bytes with the time stamp before it): a file deep in a
    /// tree must be kept too.
    static func name(_ id: ItemIdentifier) -> String {
        let whole = String(id.rawValue.dropFirst()).replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "/", with: "%2F")
        let room = 200
        guard whole.utf8.count > room else { return whole }
        var tail = Substring(whole)
        while tail.utf8.count > room - 3 { tail = tail.dropFirst() }
        return "..." + tail
    }
}
