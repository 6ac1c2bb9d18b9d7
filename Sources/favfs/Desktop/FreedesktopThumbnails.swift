import Foundation
import FavFSCore
import Logging

/// Thumbnails for file managers, made from the remote's previews without downloading the
/// files (freedesktop Thumbnail Managing Standard 0.9): when a folder of a remote that makes
/// previews is listed, each image in it gets `$XDG_CACHE_HOME/thumbnails/normal/<md5 of its
/// file:// URI>.png` (at most 128 px, with `Thumb::URI`, `Thumb::MTime` = the mtime favfs
/// reports, `Thumb::Size`, `Thumb::Mimetype`), in the background, two at a time. Thunar,
/// Nautilus and PCManFM find them there before they would read the file.
final class FreedesktopThumbnails: @unchecked Sendable {
    static let imageTypes = ["jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp"]
    static let normalSize = 128
    static let concurrency = 2

    private let domain: Domain
    private let store: ThumbnailStore
    private let mountpoint: String
    let directory: URL
    private let log = Logger(label: "favfs.thumbnails.freedesktop")
    private let lock = NSLock()
    /// Items whose thumbnail is up to date, with the mtime it is for.
    private var done: [ItemIdentifier: Int64] = [:]
    private var queued: Set<ItemIdentifier> = []
    private var queue: [Item] = []
    private var workers = 0

    /// Nil when the remote makes no previews.
    init?(domain: Domain, store: ThumbnailStore, mountpoint: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard domain.provider.capabilities.contains(.thumbnails) else { return nil }
        self.domain = domain; self.store = store; self.mountpoint = mountpoint
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (NSHomeDirectory() as NSString).appendingPathComponent(".cache")
        directory = URL(fileURLWithPath: cache).appendingPathComponent("thumbnails/normal", isDirectory: true)
    }

    /// Subscribes to the domain's listings.
    func start() {
        domain.foldersShown.subscribe { [weak self] shown in self?.folderShown(shown.items) }
    }

    func folderShown(_ items: [Item]) {
        let start: Int = lock.withLock {
            for item in items where item.kind == .file && Self.mimeType(item.name) != nil {
                let mtime = Self.mtime(item)
                guard done[item.identifier] != mtime, queued.insert(item.identifier).inserted else { continue }
                queue.append(item)
            }
            let more = min(Self.concurrency - workers, queue.count)
            workers += more
            return more
        }
        for _ in 0..<start { Task.detached(priority: .background) { [self] in await work() } }
    }

    private func work() async {
        while let item = lock.withLock({ () -> Item? in
            if queue.isEmpty { workers -= 1; return nil }
            return queue.removeFirst()
        }) {
            do {
                try await write(item)
                lock.withLock { done[item.identifier] = Self.mtime(item); queued.remove(item.identifier) }
            } catch {
                log.info("no thumbnail for \(item.identifier): \(error)")
                lock.withLock { done[item.identifier] = Self.mtime(item); queued.remove(item.identifier) }
            }
        }
    }

    /// Writes `item`'s thumbnail unless an up-to-date one is there.
    private func write(_ item: Item) async throws {
        let uri = Self.uri(path: (mountpoint == "/" ? "" : mountpoint) + item.identifier.rawValue)
        let file = directory.appendingPathComponent(MD5.hex(Array(uri.utf8)) + ".png")
        let mtime = String(Self.mtime(item))
        if let text = PNGText.read(file.path), text["Thumb::URI"] == uri, text["Thumb::MTime"] == mtime { return }
        let jpeg = try Data(contentsOf: try await domain.thumbnailFile(item.identifier, store: store))
        let image = try ThumbnailImage(jpeg: jpeg).fitting(Self.normalSize)
        try makeDirectory()
        // Written beside and renamed: a file manager never reads half a thumbnail.
        let temp = directory.appendingPathComponent(".favfs-\(UUID().uuidString).png")
        do {
            try image.writePNG(to: temp.path, text: [
                ("Thumb::URI", uri), ("Thumb::MTime", mtime), ("Thumb::Size", String(item.size)),
                ("Thumb::Mimetype", Self.mimeType(item.name) ?? "image/jpeg"), ("Software", "favfs"),
            ])
            chmod(temp.path, 0o600)
            guard rename(temp.path, file.path) == 0 else { throw ThumbnailImage.Failure(description: "cannot rename into \(file.path): \(String(cString: strerror(errno)))") }
        } catch {
            unlink(temp.path)
            throw error
        }
    }

    private func makeDirectory() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    static func mtime(_ item: Item) -> Int64 { item.modifiedTime?.seconds ?? 0 }

    static func mimeType(_ name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return imageTypes[name[name.index(after: dot)...].lowercased()]
    }

    /// `file://` and the path, escaped as GLib's g_filename_to_uri does (what file managers
    /// hash): unreserved characters and `!$&'()*+,;=:@/` stay, every other byte is %XX.
    static func uri(path: String) -> String {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/".utf8)
        var out = "file://"
        for byte in path.utf8 {
            if allowed.contains(byte) { out.append(Character(Unicode.Scalar(byte))) } else { out += String(format: "%%%02X", byte) }
        }
        return out
    }
}
