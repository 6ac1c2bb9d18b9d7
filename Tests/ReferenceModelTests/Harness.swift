import Foundation
import FavFSCore
import Providers

/// A discrepancy between the core and the model.
struct ModelFailure: Error, CustomStringConvertible {
    /// What kind of check failed (shrinking keeps runs that fail the same way).
    let signature: String
    let step: Int
    let message: String
    var description: String { "step \(step): [\(signature)] \(message)" }
}

/// Drives one `Domain` (no FUSE) over a real served folder through the calls the FUSE bridge
/// makes, and checks every answer against `RefModel`.
final class CoreHarness: @unchecked Sendable {
    let base: URL
    let served: URL
    let cacheDir: URL
    let plan = FaultPlan()
    let local: LocalProvider
    private(set) var provider: FaultyProvider
    private(set) var domain: Domain
    private var handles: [Int: (handle: UInt64, id: ItemIdentifier)] = [:]
    private var orphanSeq = 0
    private var remoteClock = 0
    var model = RefModel()
    var trace: [String] = []
    let verbose: Bool

    init(verbose: Bool = false) throws {
        self.verbose = verbose
        base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-refmodel-\(UUID().uuidString.prefix(8))")
        served = base.appendingPathComponent("served")
        cacheDir = base.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: cacheDir, withIntermediateDirectories: true)
        local = LocalProvider(root: served.path)
        provider = FaultyProvider(local, plan: plan)
        domain = try Self.makeDomain(provider, cacheDir)
    }

    deinit { try? FileManager.default.removeItem(at: base) }

    static func options() -> DomainOptions {
        var o = DomainOptions()
        o.dirCacheTime = 3600          // listings change only when the harness says a poll ran
        o.pollInterval = 0
        o.prefetchSubfolders = 0       // no background listings the model cannot order
        o.maxUploadBackoff = 0.001     // retries without waiting (the count is what matters)
        o.cacheLimit = 1 << 30
        // The model's fsync is `--fsync remote`'s: confirmed by the remote, its refusals and
        // conflicts answered to the program (the default, local fsync is checked end to end).
        o.fsyncWaitsForRemote = true
        // A close's upload starts after its grace, as in a mount; shorter here only so that
        // each close's settle waits less.
        o.uploadCloseGrace = 0.002
        return o
    }

    /// As `MountRunner` opens a cache dir: the store, the content cache, content the store does
    /// not know kept in lost+found, the domain.
    static func makeDomain(_ provider: FaultyProvider, _ cacheDir: URL) throws -> Domain {
        let store = try PlaceholderStore(path: cacheDir.appendingPathComponent("placeholders.sqlite").path)
        let content = try ContentCache(directory: cacheDir.appendingPathComponent("content"), store: store, limit: options().cacheLimit)
        _ = content.rescueUnknownFiles()
        return Domain(provider: provider, store: store, content: content, options: options())
    }

    /// The mount's start: connect, list the root ahead, resume the journal's uploads.
    func start() async throws {
        // In `MountRunner`'s order.
        // Faults are held back while connecting (a mount that cannot connect does not start);
        // the resumed uploads and the root listing take them as any other call.
        plan.suspend()
        _ = try await domain.connect()
        plan.resume()
        // The journal first, then the root listing (a listing merged before the journal's
        // dirty items are known dropped them: fixed in MountRunner).
        domain.resumeUploads()
        _ = await domain.listRootAhead()?.result
        try await settle(step: -1)
    }

    // MARK: running

    enum Actual: Equatable { case ok, bytes([UInt8]), listing([String: Bool]), error(ProviderError.Kind, String) }

    /// What an injected transient fault may surface as: its own kind or another that the bridge
    /// maps to the same errno (EIO; e.g. a failed download is reported as a short one).
    static let injectedKinds: Set<ProviderError.Kind> = [.timedOut, .serverError, .invalidResponse, .unreachable, .localIO]

    /// Runs `steps`; nil when the core agreed with the model throughout (and after the drain).
    func run(_ steps: [Step]) async -> ModelFailure? {
        do {
            try await start()
            for (i, step) in steps.enumerated() {
                try await perform(step, index: i)
            }
            try await finish(step: steps.count)
            return nil
        } catch let f as ModelFailure {
            return f
        } catch {
            return ModelFailure(signature: "harness", step: -1, message: "\(error)")
        }
    }

    private func perform(_ step: Step, index: Int) async throws {
        if excluded(step) { trace.append("#\(index) \(step) — excluded (KnownIssues)"); return }
        let before = model
        var m = model
        let expect = m.apply(step)
        if expect == .skip { trace.append("#\(index) \(step) — skipped"); return }
        let faultsBefore = plan.genericDelivered
        let deliveredBefore = plan.deliveredCount
        let actual = await execute(step, index: index)
        try await settle(step: index)
        if KnownIssues.staleNameWhenRefreshFails {
            let statFaults = plan.delivered.dropFirst(deliveredBefore).filter { $0.kind == .stat }
            if !statFaults.isEmpty {
                plan.suspend()
                await notice(statFaults.map { parentPath($0.path) })
                plan.resume()
                try await settle(step: index)
            }
        }
        let genericFaults = plan.genericDelivered - faultsBefore
        if verbose { print("#\(index) \(step) → \(short(actual)) (expected \(describe(expect)))") }
        trace.append("#\(index) \(step) → \(short(actual))")
        if Self.agrees(expect, actual) {
            model = m
        } else if case .error(let k, _) = actual, genericFaults > 0, Self.injectedKinds.contains(k) {
            var m2 = before
            _ = m2.apply(step, failedByFault: true)
            model = m2
        } else {
            throw ModelFailure(signature: "answer(\(Self.kindName(step)): \(tag(expect))/\(tag(actual)))", step: index,
                               message: "\(step): the model expected \(describe(expect)), the core answered \(short(actual))")
        }
        if case .crash = step { try await crashAndRestart(step: index) }
        if case .check = step { try await fullCheck(step: index, final: false) }
    }

    static func agrees(_ e: RefModel.Expect, _ a: Actual) -> Bool {
        switch (e, a) {
        case (.ok, .ok): return true
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.listing(let x), .listing(let y)): return x == y
        case (.error(let k), .error(let j, _)): return k == j
        default: return false
        }
    }

    /// Steps left out of the default run because of a known core issue (`KnownIssues`).
    private func excluded(_ step: Step) -> Bool {
        // A stat is the refresh after a conflict or refusal (staleNameWhenRefreshFails):
        // generic stat faults are left out altogether.
        if case .fail(.stat, _, _, nil, _) = step, KnownIssues.staleNameWhenRefreshFails { return true }
        let armed = plan.armedFaults
        // Not a core issue: the model does not predict which call takes a generic fault. An
        // upload retried after its answer was lost compares the server's bytes with its own
        // (reads); a generic read fault taken there fails that attempt in the core and not in
        // the model, and near the attempt limit the two part (a 1000-step run, seed 100: the
        // core kept a new file the model had uploaded, then another client moved it away).
        // So the two kinds of fault are not armed together.
        switch step {
        case .fail(.upload, _, _, _, true):
            if armed.contains(where: { $0.path == nil && [.read, .stat, .any].contains($0.kind) }) { return true }
        case .fail(let kind, _, _, nil, _) where [.read, .stat, .any].contains(kind):
            if armed.contains(where: \.afterApply) { return true }
        default:
            break
        }
        guard KnownIssues.sameContentCheckGivesUpOnTransientFault else { return false }
        switch step {
        case .fail(.read, _, _, nil, _) where !model.local.isEmpty:
            // A dirty file's upload may meet "exists"/"version changed" and compare.
            return true
        case .fail(.upload, _, _, _, true), .closeRefused(_, .versionChanged):
            return armed.contains { $0.path == nil && [.read, .stat, .any].contains($0.kind) }
        case .fail(let kind, _, _, nil, _) where [.read, .stat, .any].contains(kind):
            return armed.contains { $0.afterApply }
        default:
            return false
        }
    }

    private func tag(_ e: RefModel.Expect) -> String {
        switch e { case .ok: return "ok"; case .skip: return "skip"; case .bytes: return "bytes"; case .listing: return "listing"; case .error(let k): return "\(k)" }
    }

    private func tag(_ a: Actual) -> String {
        switch a { case .ok: return "ok"; case .bytes: return "bytes"; case .listing: return "listing"; case .error(let k, _): return "\(k)" }
    }

    static func kindName(_ s: Step) -> String { String(s.description.dropFirst().prefix { $0.isLetter }) }

    private func short(_ a: Actual) -> String {
        switch a {
        case .ok: return "ok"
        case .bytes(let b): return "\(b.count) bytes \(digest(b))"
        case .listing(let l): return "[\(l.keys.sorted().map { l[$0]! ? $0 + "/" : $0 }.joined(separator: ", "))]"
        case .error(let k, let m): return "error .\(k) (\(m))"
        }
    }

    private func describe(_ e: RefModel.Expect) -> String {
        switch e {
        case .ok: return "ok"
        case .skip: return "skip"
        case .bytes(let b): return "\(b.count) bytes \(digest(b))"
        case .listing(let l): return "[\(l.keys.sorted().map { l[$0]! ? $0 + "/" : $0 }.joined(separator: ", "))]"
        case .error(let k): return "error .\(k)"
        }
    }

    private func digest(_ b: [UInt8]) -> String {
        var h: UInt64 = 1469598103934665603
        for x in b { h = (h ^ UInt64(x)) &* 1099511628211 }
        return String(h % 0xFFFFFF, radix: 16)
    }

    // MARK: the bridge's calls

    private func id(_ p: String) -> ItemIdentifier { p == "/" ? .rootContainer : ItemIdentifier(p) }

    /// The kernel's path walk: one lookup per name (from memory when the core can, as the bridge does).
    private func resolve(_ p: String) async throws -> Item {
        var item = domain.cachedItem(.rootContainer) ?? Item(identifier: .rootContainer, kind: .folder)
        item.kind = .folder
        var at = ItemIdentifier.rootContainer
        for comp in p.split(separator: "/").map(String.init) {
            guard item.kind == .folder else { throw ProviderError(.notAFolder, path: at.rawValue, detail: "not a folder (path walk)") }
            switch domain.lookupImmediately(at, comp) {
            case .found(let i)?: item = i
            case .absent?: throw ProviderError(.notFound, path: at.child(comp).rawValue, detail: "absent (lookupImmediately)")
            case nil: item = try await domain.lookup(at, comp)
            }
            at = at.child(comp)
        }
        return item
    }

    private func resolveFolder(_ p: String) async throws -> ItemIdentifier {
        let item = try await resolve(p)
        guard item.kind == .folder else { throw ProviderError(.notAFolder, path: p, detail: "not a folder (path walk)") }
        return id(p)
    }

    private func readAll(_ h: UInt64) async throws -> [UInt8] {
        let size = 1 << 22
        let r: ReadResult
        if let now = domain.readIfPresent(handle: h, offset: 0, size: size) { r = now }
        else { r = try await domain.read(handle: h, offset: 0, size: size) }
        var d = [UInt8](repeating: 0, count: r.length)
        let n = d.withUnsafeMutableBytes { pread(r.fd, $0.baseAddress, r.length, off_t(r.offset)) }
        return Array(d.prefix(max(0, n)))
    }

    private func listing(_ folder: ItemIdentifier) async throws -> [String: Bool] {
        var r: [String: Bool] = [:]
        for item in try await domain.children(of: folder) {
            r[Self.displayName(item.name)] = item.kind == .folder
        }
        return r
    }

    static let conflictRegex = #" \(conflict \d{4}-\d{2}-\d{2} \d{6}( \d+)?\)"#
    /// A conflict copy's name as the model writes it: `NAME (conflict)` (a conflict copy of a
    /// conflict copy too: the model keeps one mark).
    static func displayName(_ name: String) -> String {
        var plain = name
        while let r = plain.range(of: conflictRegex, options: .regularExpression) { plain.replaceSubrange(r, with: "") }
        return plain == name ? name : plain + " (conflict)"
    }

    /// The path the core calls the provider with for a model path. A conflict copy's model key
    /// stands for the copy a handle now writes to, whose name (its date) only the core knows.
    private func corePath(_ p: String) -> String {
        guard RefModel.isConflictKey(p) else { return p }
        for (slot, h) in model.handles where h.path == p {
            if let core = handles[slot], let id = domain.handleItemForModel(core.handle) { return id.rawValue }
        }
        return p
    }

    /// The orphan name the bridge's inode table gives a deleted inode.
    private func detach(_ p: String) {
        let slots = handles.filter { $0.value.id.rawValue == p }.map(\.key)
        guard !slots.isEmpty else { return }
        orphanSeq += 1
        let orphan = ItemIdentifier("//orphan-\(orphanSeq)")
        domain.adoptOrphan(orphan, was: id(p))
        for s in slots { handles[s]!.id = orphan }
    }

    private func execute(_ step: Step, index: Int) async -> Actual {
        do {
            switch step {
            case .create(let p, let slot):
                let parent = try await resolveFolder(parentPath(p))
                let h: UInt64
                if let now = try domain.createImmediately(parent, namePart(p)) { h = now.handle }
                else { h = try await domain.create(parent, namePart(p), exclusive: false).handle }
                handles[slot] = (h, id(p))
                return .ok
            case .openWrite(let p, let truncate, let slot):
                let item = try await resolve(p)
                let (h, _) = try await domain.openFile(item.identifier, write: true, truncate: truncate)
                handles[slot] = (h, id(p))
                return .ok
            case .write(let slot, let offset, let length, let fill):
                guard let h = handles[slot] else { return .ok }
                let bytes = pattern(offset: offset, length: length, fill: fill)
                let n = try bytes.withUnsafeBytes { try domain.write(handle: h.handle, offset: Int64(offset), $0) }
                if n != length { return .error(.localIO, "short write \(n)") }
                return .ok
            case .truncate(let slot, let size):
                guard let h = handles[slot] else { return .ok }
                _ = try await domain.setSize(h.id, Int64(size), handle: h.handle)
                return .ok
            case .truncatePath(let p, let size):
                let item = try await resolve(p)
                _ = try await domain.setSize(item.identifier, Int64(size), handle: nil)
                return .ok
            case .fsync(let slot):
                guard let h = handles[slot] else { return .ok }
                try await domain.sync(handle: h.handle)
                return .ok
            case .close(let slot):
                guard let h = handles.removeValue(forKey: slot) else { return .ok }
                domain.closeFile(h.handle)
                return .ok
            case .closeRefused(let slot, let error):
                guard let h = handles.removeValue(forKey: slot) else { return .ok }
                plan.arm(Fault(kind: .upload, path: h.id.rawValue, count: 1, error: error))
                domain.closeFile(h.handle)
                return .ok
            case .readHandle(let slot):
                guard let h = handles[slot] else { return .ok }
                return .bytes(try await readAll(h.handle))
            case .read(let p):
                let item = try await resolve(p)
                let (h, _) = try domain.openFile(item.identifier)
                defer { domain.closeFile(h) }
                return .bytes(try await readAll(h))
            case .list(let p):
                let item = try await resolve(p)
                guard item.kind == .folder else { throw ProviderError(.notAFolder, path: p, detail: "not a folder") }
                return .listing(try await listing(id(p)))
            case .mkdir(let p):
                let parent = try await resolveFolder(parentPath(p))
                _ = try await domain.makeFolder(parent, namePart(p))
                return .ok
            case .rmdir(let p):
                let item = try await resolve(p)
                guard item.kind == .folder else { throw ProviderError(.notAFolder, path: p, detail: "not a folder") }
                try await domain.removeFolder(id(parentPath(p)), namePart(p))
                return .ok
            case .unlink(let p):
                let item = try await resolve(p)
                guard item.kind != .folder else { throw ProviderError(.isAFolder, path: p, detail: "is a folder") }
                try await domain.remove(id(parentPath(p)), namePart(p))
                detach(p)
                // A file created here and never uploaded is only dropped locally; another
                // client's file of that name shows from the next poll.
                if case .file? = model.served[p] { await notice([parentPath(p)]) }
                return .ok
            case .rename(let a, let b, let noReplace):
                _ = try await resolve(a)
                _ = try await resolveFolder(parentPath(b))
                _ = try await domain.rename(id(parentPath(a)), namePart(a), to: id(parentPath(b)), namePart(b), noReplace: noReplace)
                if a == b { return .ok }
                detach(b)
                for (s, h) in handles where h.id.rawValue == a || isUnder(h.id.rawValue, a) {
                    handles[s]!.id = ItemIdentifier(b + h.id.rawValue.dropFirst(a.count))
                }
                return .ok
            case .remoteWrite(let p, let length, let fill):
                let url = served.appendingPathComponent(String(p.dropFirst()))
                try Data(pattern(offset: 0, length: length, fill: fill)).write(to: url)
                // Another client's clock: a distinct mtime per write, so the version changes
                // even when size and inode repeat within one tick of the file system's clock.
                remoteClock += 1
                try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000_000 + Double(remoteClock))], ofItemAtPath: url.path)
                await notice([parentPath(p)])
                return .ok
            case .remoteDelete(let p):
                try FileManager.default.removeItem(at: served.appendingPathComponent(String(p.dropFirst())))
                await notice([parentPath(p)])
                return .ok
            case .remoteRename(let a, let b):
                guard Glibc.rename(served.path + a, served.path + b) == 0 else { return .error(.localIO, "rename \(errno)") }
                await notice([parentPath(a), parentPath(b)])
                return .ok
            case .remoteMkdir(let p):
                try FileManager.default.createDirectory(at: served.appendingPathComponent(String(p.dropFirst())), withIntermediateDirectories: false)
                await notice([parentPath(p)])
                return .ok
            case .fail(let kind, let count, let error, let path, let afterApply):
                plan.arm(Fault(kind: kind, path: path.map(corePath), count: count, error: error, afterApply: afterApply))
                return .ok
            case .crash, .check:
                return .ok
            }
        } catch let e as ProviderError {
            return .error(e.kind, e.detail)
        } catch {
            return .error(.localIO, "\(error)")
        }
    }

    /// What makes the core notice another client's change: the poller lists the folder again
    /// (retried until a listing was answered: injected listing faults are the poller's
    /// failures, and it tries again at the next round).
    private func notice(_ folders: [String]) async {
        for f in Set(folders).sorted() {
            for _ in 0..<12 {
                let answered = plan.answered(f)
                await domain.pollForModel(id(f))
                if plan.answered(f) > answered { break }
            }
        }
    }

    /// Waits until no upload, listing or listing save is running (bounded: a core that never
    /// comes to rest is a failure, not a hang).
    /// "At rest" must hold on several looks in a row: an upload task drops its dirty state
    /// before its last steps (lost+found, the journal row, then the refresh of the name after
    /// a refusal or a conflict copy), so one look can fall between them. After a step that
    /// uploaded, the looks span some milliseconds (a store write can take that long).
    private var uploadsSettled = 0
    func settle(step: Int) async throws {
        let deadline = Date().addingTimeInterval(30)
        var quietLooks = 0
        let uploaded = plan.uploadCalls != uploadsSettled
        let looks = uploaded ? 25 : 4
        defer { uploadsSettled = plan.uploadCalls }
        while quietLooks < looks {
            if Date() > deadline { throw ModelFailure(signature: "settle", step: step, message: "the core did not come to rest within 30 s") }
            try? await Task.sleep(nanoseconds: 200_000)
            quietLooks = domain.isQuietForModel && plan.callsInFlight == 0 ? quietLooks + 1 : 0
        }
    }

    // MARK: crash

    private func crashAndRestart(step: Int) async throws {
        // The crash comes when the core is at rest (`settle`): no listing save or content record
        // in flight, which would otherwise land in the store after the next core opened it
        // (a dead process writes nothing). Calls in flight at the provider are cut off: the
        // old provider never answers the old core again.
        try await settle(step: step)
        await domain.waitForListingSaves()
        provider.kill()
        handles.removeAll()
        provider = FaultyProvider(local, plan: plan)
        do { domain = try Self.makeDomain(provider, cacheDir) }
        catch { throw ModelFailure(signature: "restart", step: step, message: "cannot open the cache dir again: \(error)") }
        do { try await start() }
        catch let f as ModelFailure { throw f }
        catch { throw ModelFailure(signature: "restart", step: step, message: "connect after the crash: \(error)") }
    }

    // MARK: checks

    /// Unmount: faults stop, every handle is released, the uploads drain; then the view, the
    /// served folder and lost+found must all equal the model.
    private func finish(step: Int) async throws {
        plan.disarmAll()
        for slot in handles.keys.sorted() { domain.closeFile(handles[slot]!.handle) }
        handles.removeAll()
        try await settle(step: step)
        let failed = await domain.drainUploads { _, _ in }
        if !failed.isEmpty {
            throw ModelFailure(signature: "drain", step: step, message: "uploads still failing after the faults stopped: \(failed)")
        }
        model.closeAllAndDrain()
        try await settle(step: step)
        try await fullCheck(step: step, final: true)
        // The next mount of this cache dir: content the store does not know goes to
        // lost+found, so anything left behind shows there.
        try await crashAndRestart(step: step)
        try await fullCheck(step: step, final: true)
    }

    /// A file or folder as found, with conflict copies under their model name.
    enum Found: Equatable, Comparable {
        case folder(String)
        case file(String, [UInt8])
        static func < (a: Found, b: Found) -> Bool { a.key < b.key }
        var key: String {
            switch self {
            case .folder(let p): return p + "/"
            case .file(let p, let c):
                var h: UInt64 = 1469598103934665603
                for x in c { h = (h ^ UInt64(x)) &* 1099511628211 }
                return p + " " + String(c.count) + " bytes #" + String(h % 0xFFFFFF, radix: 16)
            }
        }
    }

    private func modelView() -> [Found] {
        model.view().filter { $0.key != "/" }.map { (p, n) -> Found in
            let shown = RefModel.isConflictKey(p) ? join(parentPath(p), RefModel.conflictDisplay(p)) : p
            switch n { case .folder: return .folder(shown); case .file(let c): return .file(shown, c) }
        }.sorted()
    }

    private func modelServed() -> [Found] {
        model.served.filter { $0.key != "/" }.map { (p, n) -> Found in
            let shown = RefModel.isConflictKey(p) ? join(parentPath(p), RefModel.conflictDisplay(p)) : p
            switch n { case .folder: return .folder(shown); case .file(let c, _): return .file(shown, c) }
        }.sorted()
    }

    /// The view through the core: readdir of every folder, every file opened and read.
    private func coreView(step: Int) async throws -> [Found] {
        var found: [Found] = []
        var queue: [ItemIdentifier] = [.rootContainer]
        while !queue.isEmpty {
            let folder = queue.removeFirst()
            let items: [Item]
            do { items = try await domain.children(of: folder) }
            catch { throw ModelFailure(signature: "view", step: step, message: "readdir \(folder) failed: \(error)") }
            for item in items {
                let shown = join(parentPath(item.identifier.rawValue), Self.displayName(item.name))
                switch item.kind {
                case .folder:
                    found.append(.folder(shown))
                    queue.append(item.identifier)
                case .file:
                    do {
                        let (h, _) = try domain.openFile(item.identifier)
                        defer { domain.closeFile(h) }
                        found.append(.file(shown, try await readAll(h)))
                    } catch {
                        throw ModelFailure(signature: "view", step: step, message: "reading \(item.identifier) failed: \(error)")
                    }
                case .symlink:
                    found.append(.file(shown + " -> symlink", []))
                }
            }
        }
        return found.sorted()
    }

    private func servedOnDisk() -> [Found] {
        var found: [Found] = []
        let fm = FileManager.default
        let root = served.path
        guard let e = fm.enumerator(atPath: root) else { return [] }
        while let rel = e.nextObject() as? String {
            let full = root + "/" + rel
            var isDir: ObjCBool = false
            _ = fm.fileExists(atPath: full, isDirectory: &isDir)
            let p = "/" + rel
            let shown = join(parentPath(p), Self.displayName(namePart(p)))
            if isDir.boolValue { found.append(.folder(shown)) }
            else { found.append(.file(shown, [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: full))) ?? Data()))) }
        }
        return found.sorted()
    }

    private func lostAndFound() -> [[UInt8]] {
        let dir = domain.content.lostAndFound.directory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.map { [UInt8]((try? Data(contentsOf: dir.appendingPathComponent($0))) ?? Data()) }
            .sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The entries only one side has (as a multiset: an entry twice on one side counts).
    private func multisetDiff(_ want: [Found], _ got: [Found]) -> (missing: [String], extra: [String]) {
        var counts: [String: Int] = [:]
        for f in want { counts[f.key, default: 0] += 1 }
        for f in got { counts[f.key, default: 0] -= 1 }
        let missing = counts.filter { $0.value > 0 }.map { $0.value > 1 ? "\($0.key) ×\($0.value)" : $0.key }.sorted()
        let extra = counts.filter { $0.value < 0 }.map { $0.value < -1 ? "\($0.key) ×\(-$0.value)" : $0.key }.sorted()
        return (missing, extra)
    }

    /// Which way a comparison failed, for shrinking: something missing, something extra, both.
    private func diffKind(_ want: [Found], _ got: [Found]) -> String {
        let (missing, extra) = multisetDiff(want, got)
        let conflict = (missing + extra).contains { $0.contains("(conflict)") }
        return "(\(missing.isEmpty ? "" : "missing")\(extra.isEmpty ? "" : "+extra")\(conflict ? ",conflict-copy" : ""))"
    }

    private func diff(_ want: [Found], _ got: [Found]) -> String {
        let (missing, extra) = multisetDiff(want, got)
        return "missing \(missing.prefix(6)) unexpected \(extra.prefix(6))"
    }

    /// The view through the core equals the model (after a poll: the mount polls the folders in
    /// use); at the end also the served folder and lost+found.
    private func fullCheck(step: Int, final: Bool) async throws {
        plan.suspend()
        defer { plan.resume() }
        let folders = Set(domain.loadedFoldersForModel.map(\.rawValue))
            .union(model.view().compactMap { $0.value == .folder ? $0.key : nil } + ["/"])
        await notice(Array(folders))
        try await settle(step: step)
        let want = modelView(), got = try await coreView(step: step)
        if want != got {
            throw ModelFailure(signature: "view" + diffKind(want, got), step: step, message: "the view through the core differs from the model: \(diff(want, got))")
        }
        try await settle(step: step)
        guard final else { return }
        let wantServed = modelServed(), gotServed = servedOnDisk()
        if wantServed != gotServed {
            throw ModelFailure(signature: "served" + diffKind(wantServed, gotServed), step: step, message: "after the drain the served folder differs from the model: \(diff(wantServed, gotServed))")
        }
        let wantLost = model.lostFound.sorted { $0.lexicographicallyPrecedes($1) }
        var gotLost = lostAndFound()
        if KnownIssues.deletedWhileOpenContentLeaks {
            // Only the leftovers of files deleted while open may be there besides (see KnownIssues).
            var allowed = model.orphanLeftovers
            gotLost = gotLost.filter { c in
                if wantLost.contains(c) { return true }
                if let i = allowed.firstIndex(of: c) { allowed.remove(at: i); return false }
                return true
            }
        }
        if wantLost != gotLost {
            throw ModelFailure(signature: "lost+found", step: step,
                               message: "lost+found holds \(gotLost.map(\.count)) (sizes), the model \(wantLost.map(\.count))")
        }
    }
}
