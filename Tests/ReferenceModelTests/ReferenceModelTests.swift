/// Reference-model test of the provider core, without FUSE.
///
/// What it checks: a seeded run of steps drives a real `Domain` over a real served folder (the
/// local provider, wrapped by `FaultyProvider` to fail chosen calls) through the calls the FUSE
/// bridge makes — create/open/read/write/truncate/fsync/close, rename/unlink/mkdir/rmdir,
/// lookups and readdir — mixed with changes another client makes in the served folder (each
/// followed by the poll that makes the core notice), injected provider faults (transient
/// timeouts and 5xx, lost answers, refusals, version conflicts) and crashes (the core dropped
/// without shutdown, a new one started on the same cache dir as the mount starts).
/// `RefModel` says what a user of the mount should see. Every answer (bytes, listings, errno
/// kinds) must agree with it; `.check` steps compare the whole view; at the end the faults
/// stop, the handles close, the uploads drain, and the view, the served folder (conflict copies
/// compared by content) and lost+found must equal the model.
///
/// Decisions the model makes (docs/when-things-go-wrong.md): transient faults (timeouts, 5xx,
/// a lost answer) never lose data — a foreground call may fail with EIO when a fault hit it
/// (then nothing of it happened), uploads retry (10 attempts, 3 while draining) and finish
/// once the faults stop. Permanent refusals are injected only where docs/behaviour.md states the
/// outcome: `.denied` on the upload after the last handle closed → the content in lost+found,
/// the name shows the server's state; `.versionChanged` → a conflict copy beside the name
/// (none when the server has the same bytes). A crash happens at rest: nothing of the old core
/// writes after the new one opened the cache dir, its provider calls never return.
/// The core is read only through the bridge's public calls, except `CoreProbes.swift` (at
/// rest? poll a folder; loaded folders).
///
/// Default run: 40 seeds × 100 steps (4,000 steps, about 25–40 s on 2 busy cores).
/// A failing run is shrunk (chunks, then single steps) and printed with its seed as a Swift
/// array that pastes into `testReplay` below. Known core issues are excluded by the switches
/// in `KnownIssues`; `FAVFS_MODEL_KNOWN_ISSUES=show` turns them off.
///
/// Replay one seed:      FAVFS_MODEL_SEED=17 swift test --skip-build --filter ReferenceModel
/// Bigger runs:          FAVFS_MODEL_STEPS=1000 FAVFS_MODEL_SEEDS=200 swift test --skip-build --filter ReferenceModel
/// New seeds only:       FAVFS_MODEL_FIRST_SEED=81 FAVFS_MODEL_SEEDS=40 (seeds 81–120)
/// Print every step:     FAVFS_MODEL_VERBOSE=1 (with FAVFS_MODEL_SEED)
import XCTest
import FavFSCore

/// Core behaviours the model found that are not fixed yet, each excluded from the default run
/// by exactly one switch. `FAVFS_MODEL_KNOWN_ISSUES=show` turns every switch off (the runs then
/// fail where the core still has the issue); `testKnownIssueRepros` replays each one's shrunk
/// steps. Remove a switch once its issue is fixed.
enum KnownIssues {
    static let excluded = ProcessInfo.processInfo.environment["FAVFS_MODEL_KNOWN_ISSUES"] != "show"

    /// A file open for writing, still clean, is deleted (or renamed away) by another client and
    /// the core notices; then the program writes through its handle. The core acknowledges the
    /// write and marks the file dirty, but the item has no placeholder any more: the file does
    /// not show, every upload ends with `.notFound` "the item to upload is gone"
    /// (`WriteBack.uploadLoop`), fsync fails with ENOENT and the drain at unmount never empties.
    /// The model expects the write to bring the file back as a dirty file (uploaded as a
    /// conflict copy, as for any edit whose base version is gone). Excluded: writes and
    /// truncates through such a handle are skipped.
    /// Fixed for the plain case: `markDirty(through:)` writes the placeholder back with the
    /// journal row, based on the version the handle opened (a conflict copy at upload). Still
    /// open: when the name is a folder by then (the core keeps such writes private, like a
    /// deleted file's; the model puts the file over the folder) or the file's folder went at the
    /// remote too (see dirtyFileHiddenWhenItsFolderGoesAtTheRemote). Excluded: writes and
    /// truncates through such a handle.
    static let writeThroughHandleOfRemotelyDeletedFile = excluded

    /// Fixed: a file open for writing whose upload ended in a conflict copy; then the program
    /// wrote through the handle again: `saveConflictCopy` had removed the cache entry the
    /// handle writes to (`content.remove`), so later writes were acknowledged and lost at
    /// close. Worse, its dirty state went before its journal row and content: a file opened and
    /// written in between (CI, seed 10 under load) had its journal row deleted under it and was
    /// lost at a crash. Now the edit is handed to the conflict copy in one step
    /// (`handEditToConflictCopy`): handles follow it, later writes update the copy.
    /// Kept as a switch set to false so a reader finds the history.
    static let writesAfterAConflictCopyOnFsync = false

    /// A file open for writing, still clean, changes at the remote; then it is opened again
    /// here (a read, another open, a truncate by path): the new version gets a new cache entry
    /// — in the same cache file when the old one was recorded — and the handle's entry goes
    /// stale (`ContentCache.retain`). Writes through the old handle were taken for writes to a
    /// deleted file: acknowledged, never uploaded, and written into the cache file the new
    /// version's clean content now lives in; a truncate through it marked the name dirty with
    /// the new entry's bytes (found by a 200-seed run: seeds 96, 109, 127). Now they answer
    /// ESTALE (`Domain.supersededError`) and the model expects that. Still missing: the ideal
    /// — the write becomes the file's dirty content based on the handle's version, a conflict
    /// copy at upload — needs a cache file per version in use. Set to false: nothing excluded.
    static let writeThroughHandleBehindANewerOpen = false

    /// Another client deletes (or renames away) a folder holding a file that is dirty here.
    /// The core drops the folder from the view at the next listing, and the dirty file with
    /// it, until its upload re-creates the folder; meanwhile `mkdir` of that folder succeeds
    /// and the file is not listed. The model keeps the dirty file and its folders in the view
    /// (docs/behaviour.md: "uploads the file where you put it"). Excluded: such remote deletes and
    /// renames are skipped while a file under the folder is dirty.
    /// Partly fixed: a listing keeps a folder gone at the remote while it holds changes not
    /// uploaded (`DirtySet.folderNames(holdingChangesIn:)`), and `folderGone` leaves such a
    /// folder be, so the repro passes. With the exclusion off, 150 seeds found what is left:
    /// such a folder is only a view until the upload makes it again (`mkdir` inside it answers
    /// ENOENT from the remote), a folder renamed away at the remote shows at both names, and
    /// the model's own expectations for these cases need deciding. Still excluded.
    static let dirtyFileHiddenWhenItsFolderGoesAtTheRemote = excluded


    /// truncate(2) by path (setattr size without a handle: `Domain.setSize(_, _, handle: nil)`
    /// opens, truncates and closes a handle of its own) while a program has the file open for
    /// writing: in about 1 run in 5 the close of that internal handle uploads at once, as if
    /// it were the last writer (`finishWriting`'s "still open" check by cache entry), so the
    /// other writer's later edits are based on a version the model did not expect. Seen after a
    /// restart whose resumed upload ended in a conflict copy; cause not pinned down. Excluded:
    /// truncate by path is skipped while another writable handle is open on the file.
    /// Not seen since open handles follow their edit into a conflict copy (the case it was seen
    /// after): 200 seeds x 100 steps with this exclusion off. Switched off; set it back to
    /// `excluded` if a run shows it again.
    static let truncateByPathBesideAnOpenWriterUploadsAtOnce = false

    /// A file open here goes away while open — deleted here (its cache entry never recorded
    /// in the store: opened with O_TRUNC, or created over an existing name), or renamed away
    /// by another client and its name then reused by a rename here (`ContentCache.move`
    /// replaces the entry of the open file): `ContentCache.remove` unlinks a cache file only
    /// through its store record, and the last close (`release`) unlinks only entries still
    /// registered, so the cache file stays behind, unknown to the store. The next mount
    /// (`rescueUnknownFiles`) moves it to lost+found as "content not known to the database":
    /// content the user deleted (or clean content) shows up as rescued, and takes disk until
    /// then. Excluded: lost+found may hold, besides what the model expects, content that a
    /// handle held when it closed (a real loss would still show as a missing file).
    /// Its repro passes now, and 200 seeds x 100 steps passed with this exclusion off, but a
    /// 300-seed run showed it again (seeds 229, 277, 278: a file open here deleted at the
    /// remote, then a folder renamed to its name): still excluded.
    static let deletedWhileOpenContentLeaks = excluded

    /// Fixed (`remoteItemWithSameContent` throws a transient failure instead of calling the
    /// content different): a transient fault during the comparison made a conflict copy of
    /// identical bytes. Kept as a switch set to false so its exclusions can be turned back on.
    static let sameContentCheckGivesUpOnTransientFault = false

    /// An existing file opened with O_TRUNC (or `create` over it) whose content was never
    /// cached gets a cache entry that is not recorded in the store (`ContentCache.retain`:
    /// "nothing to record until bytes arrive"); writes mark the journal, but the content
    /// record is written only at close or fsync (`finishWriting` / `sync` → `persist`). A
    /// crash before that: the next mount finds a journal row without content — the cache file
    /// is moved to lost+found as unknown (`rescueUnknownFiles`), the file shows 0 bytes or the
    /// server's old content, and the upload fails with "the cached content to upload is
    /// missing" at every drain. What was written before the crash is not on the server and
    /// not where the user put it (docs: "a crash loses nothing written before it").
    /// Fixed: the journal row's transaction records the content too (`markDirty(recording:)`).
    /// Kept as a switch set to false so its exclusion can be turned back on.
    static let truncatingOpenNotRecordedUntilClose = false

    /// A handle whose cache entry went stale (another client changed the file, then the file
    /// was opened again here, which gives the new version a new entry), then the file is
    /// deleted here while that handle is open: ftruncate through it (`Domain.setSize(handle:)`
    /// checks `entry.deleted`, not `entry.stale` as `write` does) marks the orphan's
    /// "//orphan-N" name dirty; its upload fails "the item to upload is gone" forever, so
    /// the drain at unmount never empties. Excluded: truncate through such an orphan handle.
    /// The same handle (behind the remote, then orphaned) cannot read back what was written
    /// through it: `Downloads.provide` answers ESTALE for a stale entry even for bytes the
    /// handle wrote itself (docs/behaviour.md: a deleted-while-open file keeps working for `read`).
    /// Excluded with it: readHandle through such an orphan.
    static let truncateThroughOrphanOfAnOutdatedEntry = excluded

    /// A file dirty here is deleted by another client, which then makes a folder of that
    /// name. The upload (If-Match the old version) goes through `LocalProvider.replace`,
    /// which renames whatever is at the name aside — the other client's folder — finds it is
    /// not the base version, cannot link a folder back, and leaves it as
    /// `NAME (displaced xxxxxx)`: the other client's folder is renamed
    /// (Sources/Providers/Local/LocalProvider+Writing.swift). Excluded: no remote mkdir at
    /// the name of a file dirty here.
    /// Fixed: what was moved aside goes back with `renameat2(RENAME_NOREPLACE)`, folders too;
    /// the edit becomes a conflict copy beside the folder. Kept as a switch set to false so its
    /// exclusion can be turned back on.
    static let localReplaceDisplacesAFolderAtTheName = false

    /// Racy (seen once in three default runs on a loaded machine, seed 40, not shrunk below
    /// 70 steps): the server answers "version changed" for an upload although the file did not
    /// change there (an injected conflict); the conflict copy is made and the name refreshed
    /// to the server's version — which is the same version string the local edit was based
    /// on — and a read right after returned the local bytes (15109 bytes, other content) as
    /// if they were the server's. Suspected: the content record persisted at close
    /// (`finishWriting` → `persist`) carries the base version, so content of the local edit
    /// is taken for the server's version when `saveConflictCopy`'s `content.remove` and the
    /// reader's `retain` interleave. Excluded: `closeRefused(.versionChanged)` is skipped when
    /// the served version is still the edit's base.
    /// Not seen since the conflict copy hands the edit's content to the copy in one step
    /// (`handEditToConflictCopy`: no `content.remove` for a reader's `retain` to interleave
    /// with; 200 seeds x 100 steps with this exclusion off): switched off; set it back to
    /// `excluded` if a run shows it again.
    static let conflictCopyWithoutRemoteChangeServesLocalBytes = false

    /// A file open here (its content cached) is deleted or renamed away by another client;
    /// `applyRemoteChanges` keeps the content of open files, and nothing removes its store
    /// record after the last close. A new file created later under that name
    /// (`createNew` → `ContentCache.retain(local: true)`) takes the old record's cache file
    /// and its size as "dirty content": the new, empty file shows (and uploads) the deleted
    /// file's bytes. Seen with 219,595 bytes in a file just created empty, also across a
    /// crash. Fixed: `createNew` drops such a record first (`ContentCache.dropStaleRecord`).
    /// Kept as a switch set to false so its exclusion can be turned back on.
    static let contentOfAFileGoneWhileOpenReusedByANewFile = false

    /// rename(2) over a file whose upload is failing (still dirty here): `Domain.rename`
    /// flushes the destination (`try?`, the failure ignored), moves, removes the
    /// destination's content — but moves only the source's dirty states and leaves the
    /// destination's in `dirty` and the journal. The moved file then reads as the replaced
    /// file's (now empty) dirty content — 0 bytes instead of the source's — and at the next
    /// drain that stale dirty state is uploaded against the moved file. Excluded: no rename
    /// over a file whose upload fails at that moment.
    /// Fixed: `Domain.rename` drops the replaced file's dirty state. Kept as a switch set to
    /// false so its exclusion can be turned back on.
    static let renameOverAFileWhoseUploadFailedKeepsItsDirtyState = false

    /// After a conflict copy (or a read that met another version), `refreshItem` re-reads the
    /// name's metadata; when that stat fails transiently the placeholder keeps the local
    /// (or old) item, so the name shows a file that is not at the remote (or its old size)
    /// until the next listing of its folder. Excluded: after a step in which an injected
    /// stat fault was delivered, the harness polls the faulted paths' folders (as the
    /// mount's poller would) before the next step.
    static let staleNameWhenRefreshFails = excluded
}

final class ReferenceModelTests: XCTestCase {
    static var env: [String: String] { ProcessInfo.processInfo.environment }

    func testSeededRuns() async throws {
        let steps = Int(Self.env["FAVFS_MODEL_STEPS"] ?? "") ?? 100
        let seeds: [UInt64]
        if let one = UInt64(Self.env["FAVFS_MODEL_SEED"] ?? "") { seeds = [one] }
        else {
            // FAVFS_MODEL_FIRST_SEED: new seeds for a long run, past those already explored.
            let first = UInt64(Self.env["FAVFS_MODEL_FIRST_SEED"] ?? "") ?? 1
            seeds = (first..<first + UInt64(Int(Self.env["FAVFS_MODEL_SEEDS"] ?? "") ?? 40)).map { $0 }
        }
        let verbose = Self.env["FAVFS_MODEL_VERBOSE"] != nil
        var total = 0
        var seen: Set<String> = []
        let started = Date()
        StoreWitness.reset()
        for seed in seeds {
            let run = Generator.steps(seed: seed, count: steps)
            total += run.count
            guard let failure = await Self.runOnce(run, verbose: verbose) else { continue }
            guard seen.insert(failure.signature).inserted else {
                print("seed \(seed): fails again as [\(failure.signature)] (not shrunk again)")
                XCTFail("seed \(seed): \(failure)")
                continue
            }
            let (minimal, last) = await Self.shrink(run, like: failure)
            let printed = "[\n" + minimal.map { "    \($0)," }.joined(separator: "\n") + "\n]"
            print("""
                reference model: seed \(seed) fails: \(failure)
                shrunk from \(run.count) to \(minimal.count) steps, which fail with: \(last)
                replay with FAVFS_MODEL_SEED=\(seed), or paste into testReplay:
                \(printed)
                """)
            XCTFail("seed \(seed): \(last); steps: \(printed)")
        }
        print("reference model: \(seeds.count) runs, \(total) steps in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        // No SQLite call ran under `Domain.lock` and no SQLite write under `ContentCache.lock`
        // (FUSE requests take both), except where the code names why (counted).
        print("reference model: store calls under a witnessed lock (Domain.lock, ContentCache.lock), allowed: \(StoreWitness.allowed)")
        XCTAssertEqual(StoreWitness.violations.map(\.description), [], "store calls under a witnessed lock")
    }

    /// Runs `steps` on a fresh served folder and cache dir.
    static func runOnce(_ steps: [Step], verbose: Bool = false) async -> ModelFailure? {
        do {
            let h = try CoreHarness(verbose: verbose)
            return await h.run(steps)
        } catch {
            return ModelFailure(signature: "harness", step: -1, message: "\(error)")
        }
    }

    /// Delta debugging: drops chunks of steps, then single steps, while the run still fails
    /// the same way (same signature). Bounded in runs and time.
    static func shrink(_ steps: [Step], like failure: ModelFailure) async -> ([Step], ModelFailure) {
        var current = Array(steps.prefix(failure.step >= 0 ? failure.step + 1 : steps.count))
        var last = failure
        // The run up to the failing step may not fail (a failure at the drain needs the end).
        if let f = await runOnce(current), f.signature == failure.signature { last = f } else { current = steps }
        var n = 2
        var runs = 0
        let deadline = Date().addingTimeInterval(Double(env["FAVFS_MODEL_SHRINK_SECONDS"] ?? "") ?? 120)
        while current.count >= 2 && runs < 600 && Date() < deadline {
            let chunk = (current.count + n - 1) / n
            var reduced = false
            var start = 0
            while start < current.count {
                var candidate = current
                candidate.removeSubrange(start..<min(start + chunk, current.count))
                runs += 1
                if let f = await runOnce(candidate), f.signature == failure.signature {
                    current = candidate
                    last = f
                    reduced = true
                    break
                }
                start += chunk
            }
            if reduced { n = max(n - 1, 2); continue }
            if chunk == 1 { break }
            n = min(current.count, n * 2)
        }
        return (current, last)
    }

    /// The shrunk runs that found each known issue. With `FAVFS_MODEL_KNOWN_ISSUES=show` each
    /// must fail (it passes once the issue is fixed: then remove its switch); otherwise they
    /// run with the exclusions on and must pass.
    func testKnownIssueRepros() async throws {
        let repros: [(String, [Step])] = [
            ("fixed: writeThroughHandleOfRemotelyDeletedFile", [
                .remoteMkdir("/d"), .create("/d/a.txt", slot: 2), .rename("/d/a.txt", "/c.md", noReplace: false),
                .remoteDelete("/c.md"), .write(slot: 2, offset: 3718, length: 5142, fill: 216), .fsync(slot: 2)]),
            ("fixed: a write through a handle behind the remote (another client's edit lost)", [
                .remoteWrite("/a.txt", length: 5557, fill: 254), .openWrite("/a.txt", truncate: false, slot: 0),
                .remoteWrite("/a.txt", length: 3159, fill: 65), .write(slot: 0, offset: 1371, length: 3041, fill: 174)]),
            ("fixed: writesAfterAConflictCopyOnFsync", [
                .remoteMkdir("/d"), .remoteWrite("/d/b", length: 3063, fill: 69), .openWrite("/d/b", truncate: false, slot: 0),
                .write(slot: 0, offset: 5378, length: 2277, fill: 57), .remoteWrite("/d/b", length: 2623, fill: 20),
                .fsync(slot: 0), .write(slot: 0, offset: 7655, length: 2759, fill: 5)]),
            ("fixed (ESTALE): writeThroughHandleBehindANewerOpen", [
                .remoteMkdir("/d"), .remoteWrite("/d/c.md", length: 0, fill: 121), .openWrite("/d/c.md", truncate: false, slot: 0),
                .remoteWrite("/d/c.md", length: 70, fill: 173), .read("/d/c.md"), .write(slot: 0, offset: 8699, length: 2636, fill: 88)]),
            ("fixed (ESTALE): writeThroughHandleBehindANewerOpen (truncate)", [
                .remoteMkdir("/d"), .remoteWrite("/a.txt", length: 716, fill: 112), .rename("/a.txt", "/d/c.md", noReplace: true),
                .openWrite("/d/c.md", truncate: false, slot: 1), .remoteWrite("/d/c.md", length: 3905, fill: 155), .read("/d/c.md"),
                .truncate(slot: 1, size: 3972)]),
            ("dirtyFileHiddenWhenItsFolderGoesAtTheRemote (the repro passes; see the switch)", [
                .remoteMkdir("/e"), .create("/e/d", slot: 1), .remoteDelete("/e"), .mkdir("/e")]),
            ("fixed: localReplaceDisplacesAFolderAtTheName", [
                .create("/b", slot: 2), .close(slot: 2), .openWrite("/b", truncate: false, slot: 0),
                .truncate(slot: 0, size: 2547), .remoteDelete("/b"), .remoteMkdir("/b")]),
            ("fixed: truncatingOpenNotRecordedUntilClose (an empty file opened for writing)", [
                .mkdir("/e"), .remoteWrite("/e/c.md", length: 0, fill: 176), .openWrite("/e/c.md", truncate: false, slot: 1),
                .write(slot: 1, offset: 0, length: 4541, fill: 244), .crash, .read("/e/c.md")]),
            ("truncateThroughOrphanOfAnOutdatedEntry (readHandle)", [
                .remoteMkdir("/d"), .create("/d/x", slot: 1), .rename("/d/x", "/b", noReplace: false),
                .remoteWrite("/b", length: 1539, fill: 94), .read("/b"), .unlink("/b"),
                .write(slot: 1, offset: 0, length: 4680, fill: 58), .readHandle(slot: 1)]),
            ("fixed: contentOfAFileGoneWhileOpenReusedByANewFile", [
                .remoteWrite("/a.txt", length: 219595, fill: 188), .openWrite("/a.txt", truncate: false, slot: 0),
                .remoteDelete("/a.txt"), .close(slot: 0), .create("/a.txt", slot: 0), .read("/a.txt")]),
            ("fixed: renameOverAFileWhoseUploadFailedKeepsItsDirtyState", [
                .remoteWrite("/b", length: 2904, fill: 11), .create("/c.md", slot: 0),
                .fail(.upload, count: 12, error: .serverError, path: "/c.md"), .rename("/b", "/c.md", noReplace: false),
                .read("/c.md")]),
            ("fixed: the mount's root listing raced the journal's uploads (racy: run it a few times)", [
                .create("/c.md", slot: 1), .write(slot: 1, offset: 0, length: 1000, fill: 3),
                .remoteWrite("/c.md", length: 2332, fill: 126), .crash]),
            ("deletedWhileOpenContentLeaks", [
                .remoteWrite("/b", length: 4869, fill: 106), .create("/b", slot: 1), .unlink("/b"),
                .truncate(slot: 1, size: 1769), .crash]),
            ("fixed: truncatingOpenNotRecordedUntilClose", [
                .remoteWrite("/a.txt", length: 4378, fill: 49), .create("/a.txt", slot: 0), .truncate(slot: 0, size: 1189),
                .crash, .check]),
            ("truncateThroughOrphanOfAnOutdatedEntry", [
                .create("/c.md", slot: 0), .fsync(slot: 0), .remoteWrite("/c.md", length: 200259, fill: 124),
                .read("/c.md"), .unlink("/c.md"), .truncate(slot: 0, size: 3690)]),
            // Racy even without its stat fault (seen 2 in ~10 runs under load): the name stays
            // beside the conflict copy. Run as a check in show mode only, until it is fixed.
            ("staleNameWhenRefreshFails (racy)", [
                .remoteMkdir("/d"), .fail(.stat, count: 3, error: .serverError), .create("/d/c.md", slot: 0), .close(slot: 0),
                .openWrite("/d/c.md", truncate: true, slot: 0), .remoteDelete("/d/c.md"), .close(slot: 0), .list("/d")]),
            ("fixed: sameContentCheckGivesUpOnTransientFault", [
                .mkdir("/d"), .remoteWrite("/d/b", length: 101, fill: 55), .remoteMkdir("/e"), .truncatePath("/d/b", size: 0),
                .remoteRename("/d/b", "/e/c.md"), .fail(.stat, count: 1, error: .timedOut), .create("/e/c.md", slot: 1),
                .closeRefused(slot: 1, error: .versionChanged)]),
            // Seed 1 of a 300-step run: a folder replaced by a rename had a file written in it
            // here whose upload had not gone yet; the core asked only the remote and replaced it.
            ("fixed: a folder holding a file not uploaded yet is not empty for a rename", [
                .remoteMkdir("/d"), .mkdir("/d/é"), .mkdir("/d/é/é"), .mkdir("/c.md"),
                .fail(.upload, count: 12, error: .serverError, path: "/c.md/é"), .create("/c.md/é", slot: 1),
                .rename("/d/é/é", "/c.md", noReplace: false)]),
            // Seed 34 of a 300-step run, 2 in 4 runs: a rename over a file whose flushed edit became
            // a conflict copy (the file was gone at the remote) went on once the copy answered the
            // flush; the name, forgotten after that, took the renamed file with it.
            ("fixed: a conflict copy's forgotten name took a file renamed over it (racy: run it a few times)", [
                .remoteMkdir("/d"), .create("/d/a.txt", slot: 0), .close(slot: 0), .remoteWrite("/d/b", length: 100, fill: 1),
                .openWrite("/d/a.txt", truncate: false, slot: 0), .remoteDelete("/d/a.txt"),
                .write(slot: 0, offset: 0, length: 500, fill: 2), .rename("/d/b", "/d/a.txt", noReplace: false),
                .unlink("/d/a.txt")]),
            // Seed 61 of a 300-step run: a folder gone at the remote left its files' cache records;
            // a folder renamed to its name then collided with them in the store (UNIQUE on
            // content.id) after the server had moved it: EIO, and the core and server disagreed.
            ("fixed: a rename onto a name whose old folder left cached content", [
                .mkdir("/d"), .remoteWrite("/d/c.md", length: 5045, fill: 191), .read("/d/c.md"), .mkdir("/é"),
                .create("/é/c.md", slot: 1), .crash, .remoteDelete("/é"), .rename("/d", "/é", noReplace: true)]),
            // Seed 8 of a 1000-step run: a handle superseded by a newer open (its writes answer
            // ESTALE) was made a deleted file's when another client deleted the file: its next
            // write was acknowledged and kept privately, never uploaded.
            ("fixed: a superseded handle's write after a delete at the remote answers ESTALE", [
                .remoteWrite("/a.txt", length: 2103, fill: 164), .openWrite("/a.txt", truncate: false, slot: 0),
                .remoteWrite("/a.txt", length: 3574, fill: 92), .read("/a.txt"), .remoteDelete("/a.txt"),
                .write(slot: 0, offset: 1061, length: 1873, fill: 227)]),
            // Seed 22 of a 1000-step run: another client made a folder at the name of a file the
            // server refused; a listing of that folder overwrote the file's placeholder in the
            // store, and after a restart the folder showed there, the file hidden.
            ("fixed: a listing of a folder at a refused file's name left the file after a crash", [
                .remoteWrite("/é", length: 2408, fill: 163), .openWrite("/é", truncate: false, slot: 0),
                .write(slot: 0, offset: 0, length: 10, fill: 1), .closeRefused(slot: 0, error: .denied),
                .remoteDelete("/é"), .remoteMkdir("/é"), .remoteWrite("/é/c.md", length: 2555, fill: 174),
                .crash, .list("/")]),
            // Seed 92 of a 1000-step run: a new file's upload the server stored, its answer lost,
            // later attempts failing; removed here as "never uploaded", it came back at the next
            // listing. Without the lost answer (a crash after the server stored it) the same.
            // Seed 124 of a 1000-step run: a new file's upload the server stored, its answer lost;
            // more written; a crash. What the lost attempt sent was known in memory only, so
            // after the restart the server's copy looked like another client's file: the edit
            // went to a conflict copy and the name showed the older bytes.
            ("fixed: an upload whose answer was lost, then a change and a crash, is no conflict", [
                .create("/a.txt", slot: 0), .write(slot: 0, offset: 0, length: 198, fill: 161),
                .fail(.upload, count: 1, error: .timedOut, path: "/a.txt", afterApply: true),
                .fail(.upload, count: 12, error: .serverError, path: "/a.txt"), .fsync(slot: 0),
                .write(slot: 0, offset: 1915, length: 2774, fill: 1), .crash, .read("/a.txt")]),
            // Seed 45 of a 1000-step run: a new file the server refused, renamed here; another
            // client had made a file of its old name meanwhile, which the refused one hid. The
            // old name showed nothing until the next listing.
            ("fixed: a refused new file renamed away shows the remote's file at its old name", [
                .create("/b", slot: 1), .remoteWrite("/b", length: 2857, fill: 132),
                .closeRefused(slot: 1, error: .denied), .rename("/b", "/é", noReplace: false), .read("/b")]),
            ("fixed: a new file whose upload was stored but never confirmed is deleted at the remote", [
                .fail(.upload, count: 1, error: .timedOut, path: "/a.txt", afterApply: true),
                .fail(.upload, count: 12, error: .serverError, path: "/a.txt"),
                .create("/a.txt", slot: 0), .write(slot: 0, offset: 0, length: 900, fill: 7), .close(slot: 0),
                .check, .unlink("/a.txt"), .list("/")]),
            // Seed 35 of a 1000-step run: an upload the server stored but whose answer was lost
            // (a timeout), then a change here; the next upload found the server's bytes differ
            // from the local ones and made a conflict copy of our own edit.
            ("fixed: an upload whose answer was lost, then a change, is no conflict", [
                .mkdir("/d"), .fail(.read, count: 1, error: .serverError), .fail(.read, count: 3, error: .timedOut),
                .fail(.upload, count: 1, error: .timedOut, path: "/d/b"), .fail(.read, count: 2, error: .serverError),
                .fail(.read, count: 2, error: .timedOut), .create("/d/b", slot: 0),
                .fail(.upload, count: 1, error: .timedOut, path: "/d/b", afterApply: true), .truncate(slot: 0, size: 4103),
                .fsync(slot: 0), .truncate(slot: 0, size: 3769), .close(slot: 0), .truncatePath("/d/b", size: 4090)]),
            // Seed 57 of a 1000-step run, once the core no longer made that conflict copy: the
            // model had kept it for an upload loop that failed after the answer was lost.
            ("fixed: an upload whose answer was lost, then the loop failed and a change came", [
                .mkdir("/é"), .create("/a.txt", slot: 0), .fail(.upload, count: 1, error: .timedOut, path: "/a.txt", afterApply: true),
                .fail(.upload, count: 12, error: .serverError, path: "/a.txt"), .rename("/a.txt", "/é/c.md", noReplace: false),
                .write(slot: 0, offset: 20228, length: 3922, fill: 60), .fsync(slot: 0), .read("/a.txt")]),
        ]
        for (name, steps) in repros {
            var failure = await Self.runOnce(steps)
            // Racy ones get a few tries to show (in show mode only).
            for _ in 0..<(name.contains("racy") && !KnownIssues.excluded ? 9 : 0) where failure == nil {
                failure = await Self.runOnce(steps)
            }
            if KnownIssues.excluded {
                if name.contains("(racy)") && !name.hasPrefix("fixed") { continue }
                XCTAssertNil(failure, "\(name): \(failure.map { "\($0)" } ?? "")")
            } else {
                print("known issue \(name): \(failure.map { "still fails: \($0)" } ?? "PASSES now: remove its switch")")
            }
        }
    }

    /// Replays a printed step list (paste a shrunk run here to debug it).
    func testReplay() async throws {
        let steps: [Step] = [
            .remoteMkdir("/d"),
            .remoteWrite("/a.txt", length: 300, fill: 1),
            .create("/d/x.txt", slot: 0),
            .write(slot: 0, offset: 0, length: 1000, fill: 2),
            .openWrite("/a.txt", truncate: false, slot: 1),
            .write(slot: 1, offset: 10, length: 20, fill: 3),
            .remoteWrite("/a.txt", length: 50, fill: 4),
            .close(slot: 1),
            .fail(.upload, count: 2, error: .timedOut, path: "/d/x.txt"),
            .fsync(slot: 0),
            .crash,
            .rename("/d", "/e", noReplace: false),
            .check,
        ]
        if let failure = await Self.runOnce(steps, verbose: Self.env["FAVFS_MODEL_VERBOSE"] != nil) {
            XCTFail("\(failure)")
        }
    }
}
