import Foundation
import FavFSCore
import Providers

/// The kinds of provider call a fault can be aimed at.
enum CallKind: String, CaseIterable, Sendable {
    case list, stat, read, upload, createFolder, delete, move, setModified, symlink, copy, any
}

/// One armed fault: the next `count` calls of `kind` (optionally only for `path`) fail with
/// `error`. `afterApply`: the call is made first and only its answer is lost (a timeout after
/// the server applied it) — used for uploads only, whose retry docs/when-things-go-wrong.md says is recognised.
struct Fault: Sendable, CustomStringConvertible {
    var kind: CallKind
    var path: String?
    var count: Int
    var error: ProviderError.Kind
    var afterApply = false
    var description: String { "\(count)× \(kind)\(path.map { " " + $0 } ?? "") → \(error)\(afterApply ? " (after apply)" : "")" }
}

/// What one delivered fault hit (for the report and the model).
struct DeliveredFault: Sendable { let kind: CallKind; let path: String; let error: ProviderError.Kind; let afterApply: Bool; let generic: Bool }

/// The faults armed for a run, shared by every `FaultyProvider` of that run (each core
/// generation after a crash gets its own wrapper, the plan stays).
final class FaultPlan: @unchecked Sendable {
    private let lock = NSLock()
    private var armed: [Fault] = []
    private var log: [DeliveredFault] = []
    /// While set, no fault is delivered (the harness's own checks).
    private var suspended = 0

    func arm(_ f: Fault) { lock.withLock { armed.append(f) } }
    func disarmAll() { lock.withLock { armed.removeAll() } }
    var delivered: [DeliveredFault] { lock.withLock { log } }
    var deliveredCount: Int { lock.withLock { log.count } }
    /// Faults not aimed at one path (the model does not predict who consumes them).
    var genericDelivered: Int { lock.withLock { log.filter(\.generic).count } }
    private var answeredLists: [String: Int] = [:]
    /// Listings of `path` the real provider answered (with items or an error of its own).
    func answered(_ path: String) -> Int { lock.withLock { answeredLists[path] ?? 0 } }
    func noteAnswered(_ path: String) { lock.withLock { answeredLists[path, default: 0] += 1 } }
    private var inFlight = 0
    /// Provider calls running now (the harness waits for none before the next step).
    var callsInFlight: Int { lock.withLock { inFlight } }
    private var uploads = 0
    /// Upload calls made so far (a step that uploaded settles longer: see `settle`).
    var uploadCalls: Int { lock.withLock { uploads } }
    func noteUpload() { lock.withLock { uploads += 1 } }
    func enter() { lock.withLock { inFlight += 1 } }
    func leave() { lock.withLock { inFlight -= 1 } }
    var armedFaults: [Fault] { lock.withLock { armed } }

    func suspend() { lock.withLock { suspended += 1 } }
    func resume() { lock.withLock { suspended -= 1 } }

    /// The fault for this call, if one is armed (path-specific faults first), consumed.
    func take(_ kind: CallKind, _ path: String, conflictCopy: Bool) -> Fault? {
        lock.withLock {
            guard suspended == 0 else { return nil }
            func matches(_ f: Fault) -> Bool {
                guard f.count > 0 else { return false }
                if let p = f.path { return p == path && (f.kind == kind || f.kind == .any) }
                // Generic faults spare conflict-copy uploads: the core sleeps a fixed 2 s after a
                // transient failure there (saveConflictCopy), which would blow the time budget.
                if conflictCopy { return false }
                return f.kind == kind || f.kind == .any
            }
            guard let i = armed.firstIndex(where: { $0.path != nil && matches($0) }) ?? armed.firstIndex(where: matches) else { return nil }
            armed[i].count -= 1
            let f = armed[i]
            if armed[i].count == 0 { armed.remove(at: i) }
            log.append(DeliveredFault(kind: kind, path: path, error: f.error, afterApply: f.afterApply, generic: f.path == nil))
            return f
        }
    }
}

/// The real local-folder provider (`file://`), wrapped: every call is delegated to it, unless
/// the plan says this call fails. Not a mock — the bytes and names are in a real folder.
/// `kill()` simulates the process dying: no call of this wrapper returns to the core again
/// (calls in flight finish at the "server" and their answer is lost).
final class FaultyProvider: @unchecked Sendable {
    let inner: LocalProvider
    let plan: FaultPlan
    private let lock = NSLock()
    private var dead = false
    private var parked: [UnsafeContinuation<Void, Never>] = []

    init(_ inner: LocalProvider, plan: FaultPlan) { self.inner = inner; self.plan = plan }

    func kill() { lock.withLock { dead = true } }

    /// After a crash nothing returns to the dead core: park the caller forever.
    private func parkIfDead() async {
        guard lock.withLock({ dead }) else { return }
        await withUnsafeContinuation { (c: UnsafeContinuation<Void, Never>) in
            lock.withLock { parked.append(c) }
        }
    }

    private static let conflictPattern = #" \(conflict \d{4}-\d{2}-\d{2} \d{6}( \d+)?\)"#

    /// Runs `body` (the real call) unless a fault is armed for it. Counted in flight while it
    /// runs (not while parked after a crash).
    private func call<T>(_ kind: CallKind, _ path: String, _ body: () async throws -> T) async throws -> T {
        await parkIfDead()
        if kind == .upload { plan.noteUpload() }
        let isCopy = kind == .upload && path.range(of: Self.conflictPattern, options: .regularExpression) != nil
        if let f = plan.take(kind, path, conflictCopy: isCopy) {
            let e = ProviderError(f.error, remote: inner.remoteDescription, path: path, detail: "injected fault (\(f))")
            if f.afterApply {
                plan.enter()
                _ = try? await body()
                plan.leave()
                await parkIfDead()
            }
            throw e
        }
        plan.enter()
        let result: Result<T, Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        if kind == .list { plan.noteAnswered(path) }
        plan.leave()
        await parkIfDead()
        return try result.get()
    }
}

extension FaultyProvider: Provider {
    var remoteDescription: String { inner.remoteDescription }
    var capabilities: ProviderCapabilities { inner.capabilities }
    func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        try await call(.list, folder.rawValue) { try await inner.enumerateItems(in: folder, page: page) }
    }
    func item(for identifier: ItemIdentifier) async throws -> Item {
        try await call(.stat, identifier.rawValue) { try await inner.item(for: identifier) }
    }
    func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        try await call(.read, item.identifier.rawValue) { try await inner.readContents(of: item, range: range, into: sink) }
    }
    func quota() async throws -> Quota? { try await inner.quota() }
}

extension FaultyProvider: WritableProvider {
    var maxFileSize: Int64? { inner.maxFileSize }
    func storageProblem(_ id: ItemIdentifier, kind: ItemKind) -> ProviderError? { inner.storageProblem(id, kind: kind) }
    func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        try await call(.upload, id.rawValue) { try await inner.upload(id, from: source, precondition: precondition) }
    }
    func createFolder(_ id: ItemIdentifier) async throws -> Item {
        try await call(.createFolder, id.rawValue) { try await inner.createFolder(id) }
    }
    func delete(_ item: Item) async throws {
        try await call(.delete, item.identifier.rawValue) { try await inner.delete(item) }
    }
    func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        try await call(.move, item.identifier.rawValue) { try await inner.move(item, to: destination, replacing: replacing) }
    }
    func setModified(_ id: ItemIdentifier, to time: Timestamp) async throws -> Item {
        try await call(.setModified, id.rawValue) { try await inner.setModified(id, to: time) }
    }
    func createSymlink(_ id: ItemIdentifier, target: String) async throws -> Item {
        try await call(.symlink, id.rawValue) { try await inner.createSymlink(id, target: target) }
    }
}

extension FaultyProvider: ServerSideCopyProvider {
    func copyItem(_ item: Item, to destination: ItemIdentifier) async throws -> Item {
        try await call(.copy, destination.rawValue) { try await inner.copyItem(item, to: destination) }
    }
}

extension FaultyProvider: FolderWatchingProvider {
    // inotify is the local provider's; the harness never starts the poller, so these only
    // register watches that nobody reads (the harness tells the core of changes itself).
    func startWatching(_ onChange: @escaping @Sendable (ItemIdentifier) -> Void) { inner.startWatching(onChange) }
    func watch(only folders: Set<ItemIdentifier>) { inner.watch(only: folders) }
    func watch(_ folder: ItemIdentifier) { inner.watch(folder) }
}
