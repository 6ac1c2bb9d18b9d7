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
/// A failing run is shrunk (chunks, then single steps) and printed with its seed as a Swift
/// array that pastes into `testReplay` below.
///
/// Replay one seed:      FAVFS_MODEL_SEED=17 swift test --skip-build --filter ReferenceModel
/// Bigger runs:          FAVFS_MODEL_STEPS=1000 FAVFS_MODEL_SEEDS=200 swift test --skip-build --filter ReferenceModel
/// Print every step:     FAVFS_MODEL_VERBOSE=1 (with FAVFS_MODEL_SEED)
import XCTest
import FavFSCore

/// Core behaviours the model found that are not fixed yet, each excluded from the default run
/// by exactly one switch (see the report in the commit that adds it). Set to false to see them.
enum KnownIssues {
    /// A file open for writing, still clean, is deleted (or renamed away) by another client and
    /// the core notices; then the program writes through its handle. The core acknowledges the
    /// write and marks the file dirty, but the item has no placeholder any more: the file does
    /// not show, every upload ends with `.notFound` "the item to upload is gone"
    /// (`Domain.uploadLoop`), fsync fails with ENOENT and the drain at unmount never empties.
    /// The model expects the write to bring the file back as a dirty file (uploaded as a
    /// conflict copy, as for any edit whose base version is gone). Excluded: writes and
    /// truncates through such a handle are skipped.
    static let writeThroughHandleOfRemotelyDeletedFile = true

    /// An upload whose answer was lost (the server stored it) is retried, gets "version
    /// changed", and the core compares the server's bytes with its own before making a conflict
    /// copy. A transient failure of that comparison's stat or read counts as "different"
    /// (`Domain.remoteItemWithSameContent` returns nil on any error), so a conflict copy of
    /// identical content is made, which the README says does not happen. Excluded: generic
    /// read/stat faults are not armed together with a lost-answer upload fault.
    static let sameContentCheckGivesUpOnTransientFault = true
}

final class ReferenceModelTests: XCTestCase {
    static var env: [String: String] { ProcessInfo.processInfo.environment }

    func testSeededRuns() async throws {
        let steps = Int(Self.env["FAVFS_MODEL_STEPS"] ?? "") ?? 100
        let seeds: [UInt64]
        if let one = UInt64(Self.env["FAVFS_MODEL_SEED"] ?? "") { seeds = [one] }
        else { seeds = (1...UInt64(Int(Self.env["FAVFS_MODEL_SEEDS"] ?? "") ?? 40)).map { $0 } }
        let verbose = Self.env["FAVFS_MODEL_VERBOSE"] != nil
        var total = 0
        var seen: Set<String> = []
        let started = Date()
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
