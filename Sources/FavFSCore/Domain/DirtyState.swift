/// An item changed here and not yet confirmed by the remote, as the upload loop sees it. The
/// journal row is the durable half; this is the live half (generation, waiters).
struct DirtyState: Sendable {
    var journal: JournalEntry
    /// Bumped by every local change; an upload clears the item only if none came meanwhile.
    var generation = 0
    /// Which dirty spell this is (`DirtySet` numbers them): a file deleted and made again under
    /// the same name is another spell, which the upload loop of the first must not take over.
    var incarnation = 0
    var uploading = false
    /// The last permanent failure (denied, no space...): uploads stop until the next change.
    var failure: ProviderError?
    /// A modification time set while dirty, applied once the upload is confirmed.
    var pendingModified: Timestamp?
    var waiters: [UploadWaiter] = []
    /// A new file written in order from its first byte: how far (nil once a write went
    /// elsewhere). Past `Domain.streamingThreshold` its upload starts while it is written.
    var appendedUpTo: Int64?
    /// The upload streaming this file while it is written (see WriteBack+Streaming.swift).
    var stream: GrowingContent?
    /// The generation the streamed content was complete at (set at the last close).
    var streamEndedAt: Int?
    /// A stream given up because somebody waits for the upload: the whole file goes at once,
    /// not at the writer's close.
    var uploadAfterStream = false
    /// Its journal row was made durable by an fsync (`PlaceholderStore.makeDurable`): later
    /// fsyncs of the file need only its cache file synced.
    var journalDurable = false
    /// An upload's commit is writing the store without `Domain.lock` (`DirtySet.beginCommit`):
    /// the row a change landing meanwhile must write, since the commit deletes the row it
    /// answered. Based on the version the remote just confirmed, with a `since` of its own.
    var rowDuringCommit: JournalEntry?
    /// Attempts whose answer was lost (a transient failure after the request went out): the
    /// server may hold their bytes, and finding them there is no conflict (the newest few).
    var lostReplies: [LostReply] = []
    /// A new file an upload was started for (or resumed from the journal of an earlier mount):
    /// although never confirmed, the server may hold it (an answer lost, a crash before the
    /// commit), so removing it asks the server too (`Domain.remove`).
    var mayBeAtRemote = false

    init(journal: JournalEntry) { self.journal = journal }
}

/// What an upload attempt sent, noted after its answer was lost (`SameContentCheck.noteLostReply`).
struct LostReply: Sendable, Equatable {
    let generation: Int
    let length: Int64
    let digest: [UInt8]
}

/// An fsync (or a rename, an unmount) waiting for the content as it was at `generation` to be
/// confirmed by the remote. Later changes do not keep it waiting: a file written to all the
/// time would otherwise never let an fsync return.
struct UploadWaiter: Sendable {
    let generation: Int
    private let answer: @Sendable (Result<Void, Error>) -> Void

    init(generation: Int, continuation: CheckedContinuation<Void, Error>) {
        self.generation = generation
        answer = { continuation.resume(with: $0) }
    }

    /// A waiter answered by `answer` (tests of the decisions, without a task waiting).
    init(generation: Int, answer: @escaping @Sendable (Result<Void, Error>) -> Void) {
        self.generation = generation
        self.answer = answer
    }

    func resume() { answer(.success(())) }
    func resume(throwing error: Error) { answer(.failure(error)) }
}
