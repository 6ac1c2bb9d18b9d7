import Foundation

/// Work done ahead of the user: fetching the whole of a file read at random. (Listing folders
/// ahead is `DirectoryReadAhead`'s.)
extension Domain {
    /// Fetches a whole file in the background, in order, one request at a time so that the
    /// reader's own requests still find free connections. Only files that fit the cache twice.
    func startFill(_ f: OpenFile) {
        let size = f.entry.withLock { f.entry.size }
        guard size <= content.limit / 2 else { return }
        let entry = f.entry, item = f.item, provider = provider, content = content
        let step = content.maxRequestSize * 2
        content.hold(entry)
        log.debug("random reads on \(item.identifier): fetching all \(size) bytes in the background")
        let started = tasks.start(priority: .utility) {
            defer { content.release(entry, asHandle: false) }
            var offset: Int64 = 0
            while offset < size && !Task.isCancelled {
                let r = offset..<min(offset + step, size)
                do { try await content.provide(entry, item: item, range: r, prefetch: nil, provider: provider) }
                catch { return }
                offset = r.upperBound
            }
        }
        if !started { content.release(entry, asHandle: false) }
    }
}
