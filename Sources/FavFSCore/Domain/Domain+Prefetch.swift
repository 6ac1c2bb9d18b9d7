import Foundation

/// Work done ahead of the user: listing the subfolders of a folder just read, and fetching the
/// whole of a file read at random.
extension Domain {
    /// Lists never-listed subfolders of `state` in the background, a few at a time. Each
    /// listing is shared with an opendir that comes meanwhile.
    func prefetchSubfolders(of state: FolderState) {
        guard options.prefetchSubfolders > 0 else { return }
        // Each subfolder is read from the store (`preload`) before the lock asks whether it
        // was ever listed.
        var found: [ItemIdentifier] = []
        for sub in state.items where sub.kind == .folder && found.count < options.prefetchSubfolders {
            let known = preload(sub.identifier)
            if lock.withLock({ s in s.refreshes[sub.identifier] == nil && loadedState(&s, sub.identifier, load: known)?.listedAt == nil }) {
                found.append(sub.identifier)
            }
        }
        let candidates = found
        guard !candidates.isEmpty else { return }
        let limit = options.prefetchConcurrency
        tasks.start(priority: .utility) { [self] in
            // Foreground first: a listing of a big subfolder costs seconds of CPU, and a file
            // opened right after browsing must not wait behind it.
            try? await Task.sleep(nanoseconds: UInt64(options.prefetchDelay * 1e9))
            await withTaskGroup(of: Void.self) { group in
                var running = 0
                for child in candidates where !Task.isCancelled {
                    if running >= limit { await group.next(); running -= 1 }
                    await waitForQuiet()
                    let known = preload(child)
                    let task: Task<FolderState, Error>? = lock.withLock { s in
                        if let t = s.refreshes[child] { return t }
                        if loadedState(&s, child, load: known)?.listedAt != nil { return nil }
                        return startRefresh(&s, child)
                    }
                    guard let task else { continue }
                    group.addTask { _ = try? await task.value }
                    running += 1
                }
            }
        }
    }

    /// Returns once no file was opened or read for `prefetchQuietTime`.
    func waitForQuiet() async {
        let quiet = options.prefetchQuietTime
        guard quiet > 0 else { return }
        while true {
            let since = Self.now - workingSet.lastForegroundRead
            if since >= quiet { return }
            try? await Task.sleep(nanoseconds: UInt64((quiet - since) * 1e9) + 1_000_000)
        }
    }

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
