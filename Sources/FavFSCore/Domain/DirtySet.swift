/// The dirty items and what write-back knows of each: write-back's decisions as a value type.
/// Each method is one event (a change landed, an upload claimed, confirmed, failed, refused,
/// a rename) and returns what the caller must do outside the lock (waiters to answer, a
/// journal row to save, a stream to feed or abandon). No I/O happens here, so every decision
/// can be tested without a server (`DirtySetTests`).
///
/// It lives under `Domain.lock`, beside the placeholders: an upload's commit changes both in
/// one step, and `openFile` and `markDirty` read both in one step.
struct DirtySet {
    private var items: [ItemIdentifier: DirtyState] = [:]
    /// Unmounting: uploads get fewer attempts (`maxUploadAttemptsWhileUnmounting`).
    var draining = false
    /// The last dirty spell numbered (`DirtyState.incarnation`).
    private var incarnations = 0
    /// Names being renamed at the remote now, source and destination (`beginMove`…`endMove`):
    /// no upload at or below them starts meanwhile — it would write under the old name after
    /// the server moved the file (a stray file there), or over what was moved in.
    private var moving: [ItemIdentifier] = []
    /// Items whose upload was due while they were being moved: started after `endMove`.
    private var deferredByMove: Set<ItemIdentifier> = []

    /// A new dirty spell for `journal`'s item.
    private mutating func spell(_ journal: JournalEntry) -> DirtyState {
        incarnations += 1
        var state = DirtyState(journal: journal)
        state.incarnation = incarnations
        return state
    }

    // MARK: questions

    subscript(_ id: ItemIdentifier) -> DirtyState? { items[id] }
    func isDirty(_ id: ItemIdentifier) -> Bool { items[id] != nil }
    func isUploading(_ id: ItemIdentifier) -> Bool { items[id]?.uploading == true }
    var ids: [ItemIdentifier] { Array(items.keys) }
    var count: Int { items.count }
    /// Whether any upload (or stream, or server-side copy) is running.
    var anyUploading: Bool { items.values.contains { $0.uploading } }

    /// `id` and everything dirty below it.
    func ids(atOrUnder id: ItemIdentifier) -> [ItemIdentifier] {
        items.keys.filter { $0.isAtOrBelow(id) }
    }

    /// Whether anything below `folder` (at any depth) is dirty.
    func hasAny(under folder: ItemIdentifier) -> Bool {
        items.keys.contains { $0.isBelow(folder) }
    }

    /// The dirty items directly in `folder`.
    func ids(in folder: ItemIdentifier) -> [ItemIdentifier] { items.keys.filter { $0.parent == folder } }

    /// The names of the folders in `folder` that hold dirty items, at any depth.
    func folderNames(holdingChangesIn folder: ItemIdentifier) -> Set<String> {
        let prefix = folder.descendantPrefix
        var names = Set<String>()
        for id in items.keys where id.rawValue.hasPrefix(prefix) {
            let rest = id.rawValue.dropFirst(prefix.count)
            if let slash = rest.firstIndex(of: "/") { names.insert(String(rest[..<slash])) }
        }
        return names
    }

    /// Uploads stopped by a transient failure (the server was down or kept failing).
    var transientlyFailed: [ItemIdentifier] {
        items.filter { !$0.value.uploading && $0.value.failure?.isTransient == true }.map(\.key)
    }

    /// Dirty items the server has not refused for good.
    var pending: [ItemIdentifier: DirtyState] { items.filter { $0.value.journal.refused == nil } }

    /// The failures of the items the server refused for good.
    var refusals: [ProviderError] { items.values.compactMap { $0.journal.refused != nil ? $0.failure : nil } }

    /// True when the content of `id` changed since `generation` (or it is no longer dirty).
    func changed(_ id: ItemIdentifier, since generation: Int) -> Bool {
        items[id].map { $0.generation != generation } ?? false
    }

    /// The state of `id` if it is still the one an upload (or a copy) began with.
    func unchanged(_ id: ItemIdentifier, generation: Int, since: Double? = nil) -> DirtyState? {
        guard let d = items[id], d.generation == generation, since == nil || d.journal.since == since else { return nil }
        return d
    }

    /// The name the dirty spell `incarnation` goes by now (a rename moves it, `renamed`); nil
    /// once it ended (uploaded, deleted).
    func name(of incarnation: Int, lastKnown id: ItemIdentifier) -> ItemIdentifier? {
        if items[id]?.incarnation == incarnation { return id }
        return items.first { $0.value.incarnation == incarnation }?.key
    }

    /// An fsync's quiet time ended: upload now when nothing changed since that fsync (at
    /// `generation`), or when the item has been dirty for `maxDelay` already. False when the
    /// dirty spell the fsync saw ended, or an upload runs.
    func quietUploadDue(_ id: ItemIdentifier, generation: Int, since: Double, now: Double, maxDelay: Double) -> Bool {
        guard let d = items[id], d.journal.since == since, !d.uploading else { return false }
        return d.generation == generation || now - since >= maxDelay
    }

    // MARK: local changes

    enum Change {
        /// The caller writes a journal row first, then calls `recorded`.
        case clean
        /// Its generation moved on and its failure is forgotten. `save`: a journal row the
        /// caller saves before the change lands — when the server had refused the content
        /// before (a change is worth another try), or when an upload's commit is deleting the
        /// row it answered (`beginCommit`).
        case dirty(save: JournalEntry?)
    }

    /// Whether `id` is dirty and a change to it now saves no journal row (`changing` answers
    /// `.dirty(save: nil)`): no commit runs and the server refused nothing.
    func isDirtyWithNoRowToSave(_ id: ItemIdentifier) -> Bool {
        guard let d = items[id] else { return false }
        return d.rowDuringCommit == nil && d.journal.refused == nil
    }

    /// A change to `id` is about to land.
    mutating func changing(_ id: ItemIdentifier) -> Change {
        guard items[id] != nil else { return .clean }
        items[id]!.generation += 1
        items[id]!.failure = nil
        if let row = items[id]!.rowDuringCommit {
            items[id]!.journal = row
            items[id]!.journalDurable = false
            return .dirty(save: row)
        }
        guard items[id]!.journal.refused != nil else { return .dirty(save: nil) }
        items[id]!.journal.refused = nil
        return .dirty(save: items[id]!.journal)
    }

    /// The journal row `journal` was written: the item is dirty from now on. A file `isNew`
    /// (created empty here) may stream its upload while written in order.
    mutating func recorded(_ journal: JournalEntry, isNew: Bool) {
        let id = journal.id
        if items[id] == nil {
            items[id] = spell(journal)
            if isNew { items[id]!.appendedUpTo = 0 }
        } else {
            items[id]!.generation += 1
        }
    }

    /// The bytes of a change landed in the cache file: an upload that began between the journal
    /// row and the write may not have read them, so it must not count as covering this change.
    mutating func landed(_ id: ItemIdentifier) {
        if items[id] != nil { items[id]!.generation += 1 }
    }

    /// Rows of the journal found at mount (a crash or kill before their upload).
    mutating func resume(_ journal: JournalEntry, failure: ProviderError?) {
        guard items[journal.id] == nil else { return }
        items[journal.id] = spell(journal)
        items[journal.id]!.failure = failure
        items[journal.id]!.mayBeAtRemote = journal.isNew  // an earlier mount may have sent it
        // Sent by an earlier mount, whose answers were lost: older than anything of this one.
        items[journal.id]!.lostReplies = journal.lostReplies.map { LostReply(generation: -1, length: $0.length, digest: $0.digest) }
    }

    /// A time set while dirty: applied once the upload is confirmed. False when `id` is clean.
    mutating func setPendingModified(_ id: ItemIdentifier, _ time: Timestamp) -> Bool {
        guard items[id] != nil else { return false }
        items[id]!.pendingModified = time
        return true
    }

    /// Whether an fsync must make the journal row durable (once per dirty spell, and again
    /// after a rename moved the row).
    func needsDurableJournal(_ id: ItemIdentifier) -> Bool { items[id].map { !$0.journalDurable } ?? false }

    mutating func journalMadeDurable(_ id: ItemIdentifier) { if items[id] != nil { items[id]!.journalDurable = true } }

    // MARK: uploads

    /// Claims the upload of `id`. False when it is clean, an upload runs (it will notice the
    /// newer generation and go again) or the server refused it (a change clears that).
    mutating func claimUpload(_ id: ItemIdentifier) -> Bool {
        guard let d = items[id], !d.uploading, d.journal.refused == nil else { return false }
        if isMoving(id) { deferredByMove.insert(id); return false }
        items[id]!.uploading = true
        items[id]!.failure = nil
        items[id]!.mayBeAtRemote = true
        return true
    }

    /// Claims a new, empty file for a server-side copy: false unless nothing was uploaded or
    /// tried for it yet.
    mutating func claimForCopy(_ id: ItemIdentifier) -> (generation: Int, since: Double)? {
        guard let d = items[id], d.journal.isNew, !d.uploading, d.failure == nil, !isMoving(id) else { return nil }
        items[id]!.uploading = true
        items[id]!.mayBeAtRemote = true
        return (d.generation, d.journal.since)
    }

    /// Ends a claim without an upload (a server-side copy that did not happen).
    mutating func releaseClaim(_ id: ItemIdentifier) -> Bool {
        guard items[id] != nil else { return false }
        items[id]!.uploading = false
        return true
    }

    /// An attempt failed and is recorded in `journal` (attempts, last error).
    mutating func attempted(_ id: ItemIdentifier, _ journal: JournalEntry) {
        if items[id] != nil { items[id]!.journal = journal }
    }

    /// An attempt's answer was lost: the server may hold what it sent (the newest four kept).
    mutating func replyLost(_ id: ItemIdentifier, _ reply: LostReply) {
        guard items[id] != nil else { return }
        items[id]!.lostReplies.append(reply)
        if items[id]!.lostReplies.count > 4 { items[id]!.lostReplies.removeFirst() }
    }

    /// The remote confirmed what `generation` held and the caller is about to record it in the
    /// store without `Domain.lock` (deleting the journal row `since` names). Until `endCommit`
    /// or `confirmed`, a change to `id` saves a row of its own (`changing`), based on
    /// `version` and with a `since` the commit's delete does not match: a crash between that
    /// change and the commit's end must not find the change without a row. Returns the state
    /// the upload answered; nil when `id` changed since `generation` (nothing to record).
    mutating func beginCommit(_ id: ItemIdentifier, generation: Int, since: Double? = nil, version: String?) -> DirtyState? {
        guard let d = unchanged(id, generation: generation, since: since) else { return nil }
        var row = d.journal
        row.baseVersion = version
        row.isNew = false
        row.refused = nil
        row.since = d.journal.since.nextUp
        items[id]!.rowDuringCommit = row
        return d
    }

    /// The store write of a commit ended (or failed): changes write no extra row any more.
    mutating func endCommit(_ id: ItemIdentifier) {
        if items[id] != nil { items[id]!.rowDuringCommit = nil }
    }

    /// The remote confirmed the content of `id`: it is clean. Returns its last state (the
    /// waiters to answer, a time to set).
    mutating func confirmed(_ id: ItemIdentifier) -> DirtyState? { items.removeValue(forKey: id) }

    /// The remote confirmed what `generation` held, but `id` changed meanwhile: the newer change
    /// is now based on `version`. Returns the waiters the upload answered and the journal row
    /// to save.
    mutating func confirmedButChanged(_ id: ItemIdentifier, generation: Int, version: String?)
        -> (answered: [UploadWaiter], journal: JournalEntry?) {
        guard items[id] != nil else { return ([], nil) }
        items[id]!.rowDuringCommit = nil
        items[id]!.journal.baseVersion = version
        items[id]!.journal.isNew = false
        // Based on what the server confirmed now: what earlier attempts sent is behind it.
        items[id]!.lostReplies.removeAll { $0.generation <= generation }
        let done = items[id]!.waiters.filter { $0.generation <= generation }
        items[id]!.waiters.removeAll { $0.generation <= generation }
        return (done, items[id]!.journal)
    }

    /// The upload stopped (a transient failure used its attempts, the cache disk, a cancelled
    /// task): tried again on the next change, fsync, poll or mount. Returns its waiters.
    mutating func failed(_ id: ItemIdentifier, _ error: ProviderError) -> [UploadWaiter] {
        guard items[id] != nil else { return [] }
        items[id]!.uploading = false
        items[id]!.failure = error
        defer { items[id]!.waiters = [] }
        return items[id]!.waiters
    }

    /// The server refused the content for good: no upload until it changes. Returns the journal
    /// row to save and the waiters.
    mutating func refused(_ id: ItemIdentifier, _ error: ProviderError) -> (journal: JournalEntry?, waiters: [UploadWaiter]) {
        guard items[id] != nil else { return (nil, []) }
        items[id]!.uploading = false
        items[id]!.failure = error
        items[id]!.journal.refused = error.kind.rawValue
        items[id]!.journal.lastError = error.description
        defer { items[id]!.waiters = [] }
        return (items[id]!.journal, items[id]!.waiters)
    }

    /// Someone waits for the upload of `id`: for the content as it is now or, `untilClean`, for
    /// no upload to be left. The answer at once when there is nothing to wait for (clean: done;
    /// failed and not uploading: that failure); nil when `waiter` was added.
    mutating func wait(_ id: ItemIdentifier, untilClean: Bool, _ waiter: (Int) -> UploadWaiter) -> Result<Void, Error>? {
        guard let d = items[id] else { return .success(()) }
        if let f = d.failure, !d.uploading { return .failure(f) }
        items[id]!.waiters.append(waiter(untilClean ? Int.max : d.generation))
        return nil
    }

    /// The local edit of `id` was saved as the conflict copy `copy` (based on `copyVersion`);
    /// the name is clean. When it changed after `generation` (what the copy holds), the copy
    /// stays dirty with the later change and the waiters for it: `again` says so. Returns the
    /// waiters answered (for what the copy holds and for the name to be clean).
    mutating func handedToConflictCopy(_ id: ItemIdentifier, copy: ItemIdentifier, copyVersion: String?, generation: Int)
        -> (answered: [UploadWaiter], again: Bool) {
        guard let d = items.removeValue(forKey: id) else { return ([], false) }
        guard d.generation != generation else { return (d.waiters, false) }
        let later = { (w: UploadWaiter) in w.generation > generation && w.generation != Int.max }
        var moved = spell(.init(id: copy, baseVersion: copyVersion, isNew: false, since: d.journal.since))
        moved.generation = d.generation
        moved.waiters = d.waiters.filter(later)
        items[copy] = moved
        return (d.waiters.filter { !later($0) }, true)
    }

    // MARK: namespace

    /// A rename of `names` (its source and destination) is about to go to the remote: no upload
    /// at or below them starts until `endMove`.
    mutating func beginMove(_ names: [ItemIdentifier]) { moving += names }

    /// The rename ended (recorded, or failed). Returns the items whose upload was due meanwhile,
    /// under their names now (after `renamed`, if it was): their uploads start now.
    mutating func endMove(_ names: [ItemIdentifier]) -> [ItemIdentifier] {
        for n in names { if let i = moving.firstIndex(of: n) { moving.remove(at: i) } }
        let due = deferredByMove.filter { items[$0] != nil && !isMoving($0) }
        deferredByMove.subtract(due)
        deferredByMove = deferredByMove.filter { items[$0] != nil }
        return Array(due)
    }

    /// Items at or below any of `names` whose upload (or stream) runs.
    func uploading(atOrUnder names: [ItemIdentifier]) -> [ItemIdentifier] {
        names.flatMap { ids(atOrUnder: $0) }.filter { items[$0]?.uploading == true }
    }

    private func isMoving(_ id: ItemIdentifier) -> Bool {
        moving.contains { id.isAtOrBelow($0) }
    }

    /// `id` is being deleted: out of the set before the remote delete (a close still in flight
    /// must not upload, and so resurrect, it). `restore` puts it back if the delete fails.
    mutating func remove(_ id: ItemIdentifier) -> DirtyState? { items.removeValue(forKey: id) }

    mutating func restore(_ id: ItemIdentifier, _ state: DirtyState) { items[id] = state }

    /// `source` was renamed to `destination`, replacing whatever was there when `replacing`.
    /// The replaced items' changes went with them (returned: their waiters, whose content no
    /// longer exists anywhere); the moved items keep theirs under the new names. An upload
    /// running under an old name ends when it finds no dirty state there: the moved items it
    /// was for are returned in `reupload`. The moved journal rows are not known durable any
    /// more (the store moved them): the next fsync makes them so.
    mutating func renamed(_ source: ItemIdentifier, to destination: ItemIdentifier, replacing: Bool)
        -> (reupload: [ItemIdentifier], replacedWaiters: [UploadWaiter]) {
        var replacedWaiters: [UploadWaiter] = []
        if replacing {
            for id in ids(atOrUnder: destination) { replacedWaiters += items.removeValue(forKey: id)?.waiters ?? [] }
        }
        var reupload: [ItemIdentifier] = []
        for id in ids(atOrUnder: source) {
            guard var state = items.removeValue(forKey: id) else { continue }
            let newId = ItemIdentifier(destination.rawValue + id.rawValue.dropFirst(source.rawValue.count))
            state.journal.id = newId  // the row store.move renamed; a later save must not bring back the old one
            state.rowDuringCommit?.id = newId
            state.journalDurable = false
            if state.uploading { state.uploading = false; reupload.append(newId) }
            if deferredByMove.remove(id) != nil { deferredByMove.insert(newId) }
            items[newId] = state
        }
        return (reupload, replacedWaiters)
    }

    /// A new file the server refused, renamed here: a new name is worth another upload.
    /// Returns the journal row to save.
    mutating func refusedFileRenamed(_ source: ItemIdentifier, to destination: ItemIdentifier) -> JournalEntry? {
        guard var s = items.removeValue(forKey: source) else { return nil }
        s.journal.id = destination
        s.rowDuringCommit?.id = destination
        s.journal.refused = nil
        s.failure = nil
        s.generation += 1
        s.journalDurable = false
        items[destination] = s
        return s.journal
    }

    // MARK: streamed uploads (WriteBack+Streaming.swift)

    enum StreamStep { case nothing, extend(GrowingContent), abandon(GrowingContent), start(GrowingContent) }

    /// A write of `offset..<end` landed: an append feeds the running stream, or starts one
    /// once a new file has `threshold` bytes and nobody waits for or tried its upload; a write
    /// anywhere else gives streaming up for this change.
    mutating func written(_ id: ItemIdentifier, offset: Int64, end: Int64, threshold: Int64) -> StreamStep {
        guard items[id] != nil else { return .nothing }
        if let stream = items[id]!.stream {
            if offset == items[id]!.appendedUpTo {
                items[id]!.appendedUpTo = end
                return .extend(stream)
            }
            items[id]!.appendedUpTo = nil
            return .abandon(stream)
        }
        guard let upTo = items[id]!.appendedUpTo else { return .nothing }
        guard offset == upTo else {
            items[id]!.appendedUpTo = nil
            return .nothing
        }
        items[id]!.appendedUpTo = end
        let d = items[id]!
        guard end >= threshold, d.journal.isNew, !d.uploading, d.waiters.isEmpty, d.failure == nil, !isMoving(id) else { return .nothing }
        let stream = GrowingContent(length: end)
        items[id]!.stream = stream
        items[id]!.streamEndedAt = nil
        items[id]!.uploadAfterStream = false
        items[id]!.uploading = true  // the stream is this item's upload: no other starts meanwhile
        items[id]!.mayBeAtRemote = true
        return .start(stream)
    }

    /// Not an append (truncate, fsync, rename, delete, unmount): returns the stream to abandon.
    /// `uploadNow`: somebody waits, so the whole file goes at once instead of at the close.
    mutating func outOfOrder(_ id: ItemIdentifier, uploadNow: Bool) -> GrowingContent? {
        guard items[id] != nil else { return nil }
        items[id]!.appendedUpTo = nil
        if uploadNow && items[id]!.stream != nil { items[id]!.uploadAfterStream = true }
        return items[id]!.stream
    }

    /// The last close of a streamed file: its content is complete as of the generation now.
    mutating func streamEnded(_ id: ItemIdentifier) -> GrowingContent? {
        guard let stream = items[id]?.stream else { return nil }
        items[id]!.streamEndedAt = items[id]!.generation
        return stream
    }

    /// The stream's upload went through: its claim passes to the commit.
    mutating func streamDone(_ id: ItemIdentifier) {
        guard items[id] != nil else { return }
        items[id]!.stream = nil
        items[id]!.streamEndedAt = nil
    }

    /// The stream was given up: the ordinary upload takes over. True when it must start now
    /// (somebody waits for it).
    mutating func streamGivenUp(_ id: ItemIdentifier) -> Bool {
        guard items[id] != nil else { return false }
        let waiting = items[id]!.uploadAfterStream || !items[id]!.waiters.isEmpty
        items[id]!.stream = nil
        items[id]!.streamEndedAt = nil
        items[id]!.uploadAfterStream = false
        items[id]!.appendedUpTo = nil
        items[id]!.uploading = false
        return waiting
    }
}
