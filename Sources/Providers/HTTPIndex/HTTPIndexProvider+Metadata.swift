import Curl
import FavFSCore
import Foundation

extension HTTPIndexProvider {
    /// The items of an index page's entries. Folders need nothing more. Files get their exact
    /// size, mtime and version from a HEAD each — `headConcurrency` at a time, over the
    /// transport's kept-alive connections — unless `.index` metadata is on and the page already
    /// gave an exact size and a date (nginx).
    ///
    /// Files that vanished (404) or became unreadable (403) between the page and their HEAD are
    /// left out; any other failure fails the listing, so a folder is never listed half.
    func items(for entries: [IndexEntry], in folder: ItemIdentifier) async throws -> [Item] {
        var items = [Item?](repeating: nil, count: entries.count)
        var pending: [Int] = []
        let metadata = configuration.metadata
        for (i, entry) in entries.enumerated() {
            let identifier = folder.child(entry.name)
            if entry.isFolder {
                items[i] = Item(identifier: identifier, kind: .folder)
            } else if metadata == .index, let size = entry.exactSize, let modified = entry.modifiedMinute {
                items[i] = Item(identifier: identifier, kind: .file, size: size, modified: modified,
                                version: HTTPIndexVersion.make(size: size, modified: modified, etag: nil, metadata: .index))
            } else {
                pending.append(i)
            }
        }
        guard !pending.isEmpty else { return items.compactMap { $0 } }

        let limit = configuration.headConcurrency
        try await withThrowingTaskGroup(of: (Int, Item?).self) { group in
            var next = 0
            while next < pending.count && next < limit {
                let i = pending[next]
                next += 1
                group.addTask { (i, try await self.headItem(folder.child(entries[i].name))) }
            }
            while let (i, item) = try await group.next() {
                items[i] = item
                if next < pending.count {
                    let j = pending[next]
                    next += 1
                    group.addTask { (j, try await self.headItem(folder.child(entries[j].name))) }
                }
            }
        }
        return items.compactMap { $0 }
    }

    /// One listed file's HEAD; nil when it is gone or refused since the page was made.
    private func headItem(_ identifier: ItemIdentifier) async throws -> Item? {
        let response = try await head(paths.url(for: identifier, isFolder: false), path: identifier.rawValue)
        switch response.status {
        case 200:
            return fileItem(identifier, response)
        case 301, 302, 303, 307, 308:
            // Listed without a slash but a folder: trust the server's redirect.
            return Item(identifier: identifier, kind: .folder)
        case 403, 404, 410:
            log.warning("a listed file cannot be looked up, leaving it out", metadata: [
                "remote": "\(remoteDescription)", "path": "\(identifier.rawValue)", "status": "\(response.status)",
            ])
            return nil
        default:
            throw errors.status(response.status, method: "HEAD", path: identifier.rawValue, body: response.body)
        }
    }
}
