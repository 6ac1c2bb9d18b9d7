/// An item changed here and not yet confirmed by the remote, as the upload loop sees it. The
/// journal row is the durable half; this is the live half (generation, waiters).
struct DirtyState: Sendable {
    var journal: PlaceholderStore.JournalEntry
    /// Bumped by every local change; an upload clears the item only if none came meanwhile.
    var generation = 0
    var uploading = false
    /// The last permanent failure (denied, no space...): uploads stop until the next change.
    var failure: ProviderError?
    /// A modification time set while dirty, applied once the upload is confirmed.
    var pendingModified: Timestamp?
    var waiters: [UploadWaiter] = []

    init(journal: PlaceholderStore.JournalEntry) { self.journal = journal }
}

/// An fsync (or a rename, an unmount) waiting for the content as it was at `generation` to be
/// confirmed by the remote. Later changes do not keep it waiting: a file written to all the
/// time would otherwise never let an fsync return.
struct UploadWaiter {
    let generation: Int
    let continuation: CheckedContinuation<Void, Error>

    func resume() { continuation.resume() }
    func resume(throwing error: Error) { continuation.resume(throwing: error) }
}
