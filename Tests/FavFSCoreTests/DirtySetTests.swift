import Synchronization
import XCTest
@testable import FavFSCore

/// Write-back's decisions, event in and actions out, without a server or a disk.
final class DirtySetTests: XCTestCase {
    private let file = ItemIdentifier("/docs/a.txt")

    private func journal(_ id: ItemIdentifier, isNew: Bool = false, base: String? = "v1", since: Double = 100) -> JournalEntry {
        .init(id: id, baseVersion: isNew ? nil : base, isNew: isNew, since: since)
    }

    private func dirtySet(_ ids: ItemIdentifier..., isNew: Bool = false) -> DirtySet {
        var set = DirtySet()
        for id in ids { set.recorded(journal(id, isNew: isNew), isNew: isNew) }
        return set
    }

    /// Answers of waiters, in the order they came: "ok" or the error's kind.
    private final class Answers: Sendable {
        let list = Mutex<[String]>([])
        func waiter(_ generation: Int, _ name: String) -> UploadWaiter {
            UploadWaiter(generation: generation) { [self] result in
                list.withLock { $0.append(name + ":" + ((try? result.get()) != nil ? "ok" : "failed")) }
            }
        }
        var all: [String] { list.withLock { $0 } }
    }

    private func answer(_ waiters: [UploadWaiter]) { for w in waiters { w.resume() } }

    /// A change anywhere is below the root: the root gone at the remote (its listing says
    /// "not found") keeps what holds changes not uploaded yet, as any folder does.
    func testEveryChangeIsBelowTheRoot() {
        let set = dirtySet(file)
        XCTAssertTrue(set.hasAny(under: .rootContainer))
        XCTAssertTrue(set.hasAny(under: ItemIdentifier("/docs")))
        XCTAssertFalse(set.hasAny(under: ItemIdentifier("/doc")), "a sibling whose name begins the same")
        XCTAssertEqual(set.ids(atOrUnder: .rootContainer), [file])
    }

    func testAChangeToACleanItemAsksForAJournalRowFirst() {
        var set = DirtySet()
        guard case .clean = set.changing(file) else { return XCTFail("a clean item needs a journal row") }
        set.recorded(journal(file), isNew: false)
        XCTAssertTrue(set.isDirty(file))
        XCTAssertEqual(set[file]?.generation, 0)
        guard case .dirty(let unrefused) = set.changing(file) else { return XCTFail("dirty now") }
        XCTAssertNil(unrefused)
        XCTAssertEqual(set[file]?.generation, 1)
        set.landed(file)
        XCTAssertEqual(set[file]?.generation, 2, "the bytes landing is a change an upload begun before must not cover")
    }

    /// sqlite deletes its journal at each commit and makes it again at the next: each is a
    /// spell of its own, so the upload loop of one never goes on with the next (two loops on
    /// one name took each other's uploads for remote changes).
    /// What attempts with a lost answer sent is kept (the newest four) until the server
    /// confirms a later generation: then it is behind the new base.
    func testLostRepliesAreKeptUntilAConfirmedGenerationPassesThem() {
        var set = dirtySet(file, isNew: true)
        for g in 0..<6 { set.replyLost(file, LostReply(generation: g, length: Int64(g), digest: [UInt8(g)])) }
        XCTAssertEqual(set[file]?.lostReplies.map(\.generation), [2, 3, 4, 5])
        let (_, row) = set.confirmedButChanged(file, generation: 3, version: "v7")
        XCTAssertEqual(row?.baseVersion, "v7")
        XCTAssertEqual(row?.isNew, false)
        XCTAssertEqual(set[file]?.lostReplies.map(\.generation), [4, 5])
    }

    func testAFileDeletedAndMadeAgainIsAnotherSpell() {
        var set = dirtySet(file, isNew: true)
        XCTAssertTrue(set.claimUpload(file))
        let first = set[file]?.incarnation
        XCTAssertNotNil(set.remove(file))
        set.recorded(journal(file, isNew: true), isNew: true)
        XCTAssertNotEqual(set[file]?.incarnation, first)
        XCTAssertFalse(set[file]?.uploading ?? true, "the new spell has no upload yet")
        XCTAssertTrue(set.claimUpload(file), "the new spell's own upload")
        let second = set[file]?.incarnation
        set.landed(file)
        XCTAssertEqual(set[file]?.incarnation, second, "a change keeps the spell")
        set.recorded(journal(file), isNew: false)
        XCTAssertEqual(set[file]?.incarnation, second, "a further change to a dirty file keeps its spell")
    }

    /// While a rename is at the remote, no upload under its names starts: it would write under
    /// the old name after the server moved the file. The uploads due meanwhile start after it,
    /// under the new names — or the old ones, when the rename failed.
    func testNoUploadStartsUnderANameBeingRenamed() {
        let docs = ItemIdentifier("/docs"), other = ItemIdentifier("/other")
        var set = dirtySet(file)
        set.beginMove([docs, other])
        XCTAssertFalse(set.claimUpload(file), "its upload waits for the rename")
        XCTAssertNil(set.claimForCopy(file))
        _ = set.renamed(docs, to: other, replacing: false)
        let moved = ItemIdentifier("/other/a.txt")
        XCTAssertEqual(set.endMove([docs, other]), [moved], "the upload due meanwhile, under the new name")
        XCTAssertTrue(set.claimUpload(moved))

        var failed = dirtySet(file)
        failed.beginMove([docs, other])
        XCTAssertFalse(failed.claimUpload(file))
        XCTAssertEqual(failed.endMove([docs, other]), [file], "the rename failed: under the old name")
        XCTAssertTrue(failed.claimUpload(file))
        XCTAssertEqual(failed.endMove([]), [], "once")
    }

    func testAChangeToRefusedContentClearsTheRefusalAndTheFailure() {
        var set = dirtySet(file)
        XCTAssertTrue(set.claimUpload(file))
        let denied = ProviderError(.denied, detail: "no")
        _ = set.refused(file, denied)
        XCTAssertFalse(set.claimUpload(file), "refused content waits for a change")
        XCTAssertEqual(set.refusals.count, 1)
        XCTAssertTrue(set.pending.isEmpty, "refused content is not pending")
        guard case .dirty(let unrefused?) = set.changing(file) else { return XCTFail("the row to save") }
        XCTAssertNil(unrefused.refused)
        XCTAssertNil(set[file]?.failure)
        XCTAssertTrue(set.claimUpload(file))
    }

    func testAChangeWhileAnUploadIsRecordedSavesARowTheCommitDoesNotDelete() {
        var set = dirtySet(file)
        XCTAssertTrue(set.claimUpload(file))
        XCTAssertNil(set.beginCommit(file, generation: 1, version: "v2"), "a commit of a generation that is not the current one")
        guard let begun = set.beginCommit(file, generation: 0, version: "v2") else { return XCTFail("the commit claims the item") }
        XCTAssertEqual(begun.journal.since, 100)
        // The store write runs without Domain.lock; a write lands meanwhile.
        guard case .dirty(let row?) = set.changing(file) else { return XCTFail("a change during the commit saves a row") }
        XCTAssertNotEqual(row.since, 100, "the commit deletes the row with since 100: this one must survive it")
        XCTAssertEqual(row.baseVersion, "v2", "based on what the remote just confirmed")
        XCTAssertFalse(row.isNew)
        XCTAssertEqual(set[file]?.journal.since, row.since, "the next commit deletes this row")
        XCTAssertFalse(set.needsDurableJournal(file) == false, "the new row is made durable by the next fsync")
        guard case .dirty(let again?) = set.changing(file) else { return XCTFail("each change during the commit saves the row") }
        XCTAssertEqual(again.since, row.since, "the same row: saves landing in any order agree")
        XCTAssertNil(set.unchanged(file, generation: 0), "the commit then finds the item changed")
        let (_, saved) = set.confirmedButChanged(file, generation: 0, version: "v2")
        XCTAssertEqual(saved?.since, row.since)
        XCTAssertEqual(saved?.baseVersion, "v2")
        guard case .dirty(let none) = set.changing(file) else { return XCTFail("still dirty") }
        XCTAssertNil(none, "after the commit a change writes nothing more")
    }

    func testACommitThatFailedToWriteTheStoreStopsSavingRows() {
        var set = dirtySet(file)
        XCTAssertTrue(set.claimUpload(file))
        XCTAssertNotNil(set.beginCommit(file, generation: 0, version: "v2"))
        set.endCommit(file)
        guard case .dirty(let row) = set.changing(file) else { return XCTFail("dirty") }
        XCTAssertNil(row)
        XCTAssertNotNil(set.beginCommit(file, generation: 1, version: "v3"))
        XCTAssertNotNil(set.confirmed(file), "a commit with no change meanwhile leaves the item clean")
        XCTAssertFalse(set.isDirty(file))
    }

    func testOneUploadAtATime() {
        var set = dirtySet(file)
        XCTAssertFalse(set.claimUpload(ItemIdentifier("/docs/clean")))
        XCTAssertTrue(set.claimUpload(file))
        XCTAssertFalse(set.claimUpload(file), "the running upload notices newer generations itself")
        XCTAssertTrue(set.anyUploading)
        _ = set.failed(file, ProviderError(.timedOut, detail: "slow"))
        XCTAssertEqual(set.transientlyFailed, [file])
        XCTAssertTrue(set.claimUpload(file))
        XCTAssertNil(set[file]?.failure, "a new attempt forgets the last failure")
    }

    func testAnUploadAnswersOnlyTheWaitersForWhatItSent() {
        let answers = Answers()
        var set = dirtySet(file)
        XCTAssertNil(set.wait(file, untilClean: false) { answers.waiter($0, "fsync1") })
        set.landed(file)  // generation 1: a later change
        XCTAssertNil(set.wait(file, untilClean: false) { answers.waiter($0, "fsync2") })
        XCTAssertNil(set.wait(file, untilClean: true) { answers.waiter($0, "rename") })
        XCTAssertNil(set.unchanged(file, generation: 0), "changed since the upload began")
        let (answered, row) = set.confirmedButChanged(file, generation: 0, version: "v2")
        answer(answered)
        XCTAssertEqual(answers.all, ["fsync1:ok"])
        XCTAssertEqual(row?.baseVersion, "v2", "the later change is based on what was just uploaded")
        XCTAssertEqual(row?.isNew, false)
        XCTAssertNotNil(set.unchanged(file, generation: 1))
        answer(set.confirmed(file)?.waiters ?? [])
        XCTAssertEqual(answers.all, ["fsync1:ok", "fsync2:ok", "rename:ok"])
        XCTAssertFalse(set.isDirty(file))
    }

    func testWaitingForACleanOrFailedItemAnswersAtOnce() {
        let answers = Answers()
        var set = dirtySet(file)
        XCTAssertNotNil(try? set.wait(ItemIdentifier("/clean"), untilClean: false) { answers.waiter($0, "x") }?.get())
        XCTAssertTrue(set.claimUpload(file))
        XCTAssertNil(set.wait(file, untilClean: false) { answers.waiter($0, "w") })
        for w in set.failed(file, ProviderError(.serverError, detail: "500")) { w.resume(throwing: ProviderError(.serverError, detail: "500")) }
        XCTAssertEqual(answers.all, ["w:failed"])
        guard case .failure? = set.wait(file, untilClean: false, { answers.waiter($0, "later") }) else {
            return XCTFail("a failed upload not running answers with its failure")
        }
        XCTAssertTrue(set[file]?.waiters.isEmpty == true)
    }

    func testARenameMovesTheSubtreeNotASiblingSharingItsPrefix() {
        var set = dirtySet(ItemIdentifier("/a/x"), ItemIdentifier("/a/sub/y"), ItemIdentifier("/ab/z"))
        XCTAssertTrue(set.claimUpload(ItemIdentifier("/a/x")))
        set.journalMadeDurable(ItemIdentifier("/a/x"))
        let (reupload, replaced) = set.renamed(ItemIdentifier("/a"), to: ItemIdentifier("/b"), replacing: false)
        XCTAssertEqual(Set(set.ids), [ItemIdentifier("/b/x"), ItemIdentifier("/b/sub/y"), ItemIdentifier("/ab/z")])
        XCTAssertEqual(reupload, [ItemIdentifier("/b/x")], "an upload running under the old name ends: the new name gets its own")
        XCTAssertFalse(set.isUploading(ItemIdentifier("/b/x")))
        XCTAssertTrue(replaced.isEmpty)
        XCTAssertEqual(set[ItemIdentifier("/b/x")]?.journal.id, ItemIdentifier("/b/x"), "a later save must not bring back the old row")
        XCTAssertTrue(set.needsDurableJournal(ItemIdentifier("/b/x")),
                      "the store moved the row: the next fsync makes it durable again, or a power cut could upload under the old name")
    }

    func testARenameOverADirtyFileDropsItsChangesAndAnswersItsWaiters() {
        let answers = Answers()
        var set = dirtySet(ItemIdentifier("/src"), ItemIdentifier("/dst"))
        XCTAssertNil(set.wait(ItemIdentifier("/dst"), untilClean: false) { answers.waiter($0, "dst") })
        let (_, replaced) = set.renamed(ItemIdentifier("/src"), to: ItemIdentifier("/dst"), replacing: true)
        answer(replaced)
        XCTAssertEqual(answers.all, ["dst:ok"])
        XCTAssertEqual(set.ids, [ItemIdentifier("/dst")])
        XCTAssertEqual(set[ItemIdentifier("/dst")]?.journal.baseVersion, "v1", "the moved file's own state, not the replaced one's")
    }

    func testAConflictCopyTakesTheLaterChangeAndItsWaiters() {
        let answers = Answers()
        let copy = ItemIdentifier("/docs/a (conflict).txt")
        var set = dirtySet(file)
        XCTAssertNil(set.wait(file, untilClean: false) { answers.waiter($0, "sent") })
        set.landed(file)
        XCTAssertNil(set.wait(file, untilClean: false) { answers.waiter($0, "later") })
        XCTAssertNil(set.wait(file, untilClean: true) { answers.waiter($0, "clean") })
        let (answered, again) = set.handedToConflictCopy(file, copy: copy, copyVersion: "c1", generation: 0)
        answer(answered)
        XCTAssertTrue(again)
        XCTAssertEqual(answers.all.sorted(), ["clean:ok", "sent:ok"])
        XCTAssertFalse(set.isDirty(file))
        XCTAssertEqual(set[copy]?.journal.baseVersion, "c1")
        XCTAssertEqual(set[copy]?.waiters.count, 1)
    }

    func testAConflictCopyOfWhatWasSentLeavesNothingDirty() {
        var set = dirtySet(file)
        let (_, again) = set.handedToConflictCopy(file, copy: ItemIdentifier("/docs/c"), copyVersion: "c1", generation: 0)
        XCTAssertFalse(again)
        XCTAssertEqual(set.count, 0)
    }

    func testARefusedNewFileRenamedIsWorthAnotherUpload() {
        var set = dirtySet(file, isNew: true)
        XCTAssertTrue(set.claimUpload(file))
        _ = set.refused(file, ProviderError(.invalidName, detail: "bad name"))
        let row = set.refusedFileRenamed(file, to: ItemIdentifier("/docs/b.txt"))
        XCTAssertEqual(row?.id, ItemIdentifier("/docs/b.txt"))
        XCTAssertNil(row?.refused)
        XCTAssertTrue(set.claimUpload(ItemIdentifier("/docs/b.txt")))
    }

    func testANewFileWrittenInOrderStreamsPastTheThreshold() {
        var set = dirtySet(file, isNew: true)
        guard case .nothing = set.written(file, offset: 0, end: 10, threshold: 100) else { return XCTFail("below the threshold") }
        guard case .start(let stream) = set.written(file, offset: 10, end: 150, threshold: 100) else { return XCTFail("past it") }
        XCTAssertTrue(set.isUploading(file), "the stream is the item's upload")
        XCTAssertFalse(set.claimUpload(file))
        guard case .extend(let same) = set.written(file, offset: 150, end: 200, threshold: 100), same === stream else {
            return XCTFail("an append feeds the stream")
        }
        guard case .abandon = set.written(file, offset: 0, end: 5, threshold: 100) else { return XCTFail("a write back over it") }
        XCTAssertTrue(set.streamGivenUp(file) == false, "nobody waits: the upload starts at the close")
        XCTAssertFalse(set.isUploading(file))
        guard case .nothing = set.written(file, offset: 200, end: 300, threshold: 100) else { return XCTFail("not in order any more") }
    }

    func testAStreamGivenUpForAWaiterUploadsAtOnce() {
        var set = dirtySet(file, isNew: true)
        guard case .start(let stream) = set.written(file, offset: 0, end: 200, threshold: 100) else { return XCTFail("streams") }
        XCTAssertTrue(set.outOfOrder(file, uploadNow: true) === stream)
        XCTAssertTrue(set.streamGivenUp(file))
    }

    func testAnOldFileDoesNotStream() {
        var set = dirtySet(file)
        guard case .nothing = set.written(file, offset: 0, end: 500, threshold: 100) else { return XCTFail("only new files stream") }
    }

    func testAQuietUploadIsDueWhenNothingChangedOrItWaitedLongEnough() {
        var set = dirtySet(file)
        XCTAssertTrue(set.quietUploadDue(file, generation: 0, since: 100, now: 101, maxDelay: 30))
        set.landed(file)
        XCTAssertFalse(set.quietUploadDue(file, generation: 0, since: 100, now: 101, maxDelay: 30), "changed since: the next fsync decides")
        XCTAssertTrue(set.quietUploadDue(file, generation: 0, since: 100, now: 131, maxDelay: 30), "dirty for the longest wait")
        XCTAssertFalse(set.quietUploadDue(file, generation: 1, since: 99, now: 101, maxDelay: 30), "another dirty spell")
        XCTAssertTrue(set.claimUpload(file))
        XCTAssertFalse(set.quietUploadDue(file, generation: 1, since: 100, now: 101, maxDelay: 30), "an upload runs")
    }

    func testRemovingAndRestoring() {
        var set = dirtySet(file, ItemIdentifier("/docs/sub/b"))
        XCTAssertTrue(set.hasAny(under: ItemIdentifier("/docs")))
        XCTAssertEqual(set.ids(in: ItemIdentifier("/docs")), [file])
        XCTAssertEqual(Set(set.ids(atOrUnder: ItemIdentifier("/docs"))), [file, ItemIdentifier("/docs/sub/b")])
        let state = set.remove(file)
        XCTAssertNotNil(state)
        XCTAssertFalse(set.isDirty(file))
        set.restore(file, state!)
        XCTAssertTrue(set.isDirty(file))
    }
}

/// Times kept here for a remote that keeps none.
final class KeptModifiedTimesTests: XCTestCase {
    private let t = Timestamp(seconds: 1_600_000_000, nanoseconds: 5)

    func testShownWhileTheVersionStaysAndToldOnce() {
        var kept = KeptModifiedTimes()
        XCTAssertTrue(kept.keep(ItemIdentifier("/a"), version: "v1", time: t), "the first time: tell the user")
        XCTAssertFalse(kept.keep(ItemIdentifier("/b"), version: "v1", time: t))
        let a = Item(identifier: ItemIdentifier("/a"), kind: .file, size: 1, modified: 5, version: "v1")
        XCTAssertEqual(kept.apply(a).modifiedTime, t)
        var changed = a
        changed.version = "v2"
        XCTAssertEqual(kept.apply(changed).modifiedTime, Timestamp(seconds: 5), "new content: the server's time")
        XCTAssertEqual(kept.apply(a).modifiedTime, Timestamp(seconds: 5), "and the kept time is forgotten")
    }

    /// Apache's tag of a file changed within the last second is weak, the same tag strong a
    /// second later: the same content, so the kept time still applies.
    func testAWeakTagTurningStrongIsTheSameVersion() {
        var kept = KeptModifiedTimes()
        let weak = Item(identifier: ItemIdentifier("/a"), kind: .file, size: 1, modified: 5, version: "W/\"v1\"")
        guard let tag = weak.contentTag else { return XCTFail("a tag") }
        _ = kept.keep(ItemIdentifier("/a"), version: tag, time: t)
        var strong = weak
        strong.version = "\"v1\""
        XCTAssertEqual(kept.apply(strong).modifiedTime, t)
        XCTAssertEqual(kept.apply(weak).modifiedTime, t)
    }

    func testARenameTakesTheTimesAlongAndDropsTheReplaced() {
        var kept = KeptModifiedTimes([.init(id: ItemIdentifier("/d/.f.tmp"), version: "v1", time: t),
                                      .init(id: ItemIdentifier("/d/f"), version: "old", time: Timestamp(seconds: 1)),
                                      .init(id: ItemIdentifier("/d/.f.tmpx"), version: "v9", time: t)])
        kept.renamed(ItemIdentifier("/d/.f.tmp"), to: ItemIdentifier("/d/f"))
        XCTAssertEqual(kept.apply(Item(identifier: ItemIdentifier("/d/f"), kind: .file, version: "v1")).modifiedTime, t)
        XCTAssertNil(kept.apply(Item(identifier: ItemIdentifier("/d/.f.tmp"), kind: .file, version: "v1")).modifiedTime)
        XCTAssertEqual(kept.apply(Item(identifier: ItemIdentifier("/d/.f.tmpx"), kind: .file, version: "v9")).modifiedTime, t,
                       "a sibling sharing the prefix stays")
    }
}
