import Foundation
import FavFSCore

/// What a user of the mount should see, as plain values: the served folder (the truth at the
/// remote, with a version per file), the files changed here and not yet confirmed (dirty),
/// the open handles, and what went to lost+found. The view is the served folder with the dirty
/// files on top. Rules (docs/behaviour.md "Writing (write-back)"; docs/when-things-go-wrong.md
/// "Two computers editing one file",
/// "Conflict copies", "Uploads the server refuses", "A crash"):
/// - local writes win on the local view until their upload is confirmed;
/// - an upload replaces the remote file only if it still has the version the edit was based
///   on (a new file: only if the name is free); else, unless the remote holds exactly the
///   local bytes, the local content goes beside it as `NAME (conflict …).EXT` and the remote
///   version keeps the name (the file is gone here if the remote has none);
/// - a folder deleted at the remote under a dirty file is re-created by its upload;
/// - transient upload failures retry (10 attempts, 3 while unmounting), then the file stays
///   dirty until the next trigger (close, fsync, rename, drain, next mount); nothing is lost;
/// - `.denied` on an upload ends it: the file stays in the view as written, refused (not sent
///   again, also not after a crash, until it changes; a never-uploaded one renamed is sent
///   under its new name), and a copy of its content goes to lost+found;
/// - a crash loses no acknowledged write: the next core resumes every dirty upload;
/// - a handle open and clean while its file changed at the remote keeps its content, and its
///   writes are based on that version (a conflict copy at upload), until the file is opened
///   again here: from then on it answers ESTALE (the newer version took the cache entry).
struct RefModel {
    enum Node: Equatable { case folder; case file([UInt8], version: Int) }
    struct Dirty: Equatable {
        var content: [UInt8]
        /// The served version the edit is based on; nil: a file created here, never uploaded.
        var base: Int?
        /// The last upload attempt failed transiently (stays dirty).
        var failed = false
        /// The server refused it for good: stays dirty, not sent again until it changes.
        var refused = false
    }
    struct Handle: Equatable {
        var path: String
        var writable: Bool
        /// What reads through this handle return.
        var content: [UInt8]
        /// The served version `content` came from (nil: created here).
        var base: Int?
        /// Deleted or replaced while open: private content, never uploaded, shared by the
        /// handles of that one deleted file (the group).
        var orphan = false
        var orphanGroup = 0
        /// Orphaned while behind the remote (KnownIssues.truncateThroughOrphanOfAnOutdatedEntry).
        var orphanedBehind = false
        /// Its file was opened again while this handle was clean and behind the remote: the new
        /// version took the file's cache entry; reads, writes and truncates through this handle
        /// answer ESTALE (`.versionChanged`). See KnownIssues.writeThroughHandleBehindANewerOpen.
        var supersededBehind = false
    }
    enum ViewNode: Equatable { case folder; case file([UInt8]) }
    enum Expect: Equatable {
        case ok
        case bytes([UInt8])
        case listing([String: Bool])  // name -> isFolder (conflict copies as "NAME (conflict)")
        case error(ProviderError.Kind)
        case skip
    }

    var served: [String: Node] = ["/": .folder]
    var local: [String: Dirty] = [:]
    var handles: [Int: Handle] = [:]
    var lostFound: [[UInt8]] = []
    /// What each handle held when it went (see `KnownIssues.deletedWhileOpenContentLeaks`).
    var orphanLeftovers: [[UInt8]] = []
    /// Files opened with O_TRUNC over an existing file whose handle has not been closed or
    /// fsynced since (KnownIssues.truncatingOpenNotRecordedUntilClose).
    var unrecorded: Set<String> = []
    /// Names whose file went at the remote while a handle had it open
    /// (KnownIssues.contentOfAFileGoneWhileOpenReusedByANewFile).
    var lingering: Set<String> = []
    private mutating func noteGone(_ p: String) {
        for h in handles.values where !h.orphan && (h.path == p || isUnder(h.path, p)) { lingering.insert(h.path) }
    }
    var nextVersion = 1
    var conflictSeq = 0
    /// Path-specific upload faults still armed, in the order the provider consumes them.
    var uploadFaults: [String: [Fault]] = [:]
    var draining = false

    static let conflictMark: Character = "\u{1}"
    static func conflictKey(_ folder: String, _ name: String, _ seq: Int) -> String { join(folder, "\u{1}\(seq)\u{1}\(name)") }
    static func isConflictKey(_ p: String) -> Bool { namePart(p).first == conflictMark }
    /// The original name a conflict key stands for, shown as `NAME (conflict)`.
    static func conflictDisplay(_ p: String) -> String {
        let parts = namePart(p).split(separator: "\u{1}", omittingEmptySubsequences: true)
        return "\(parts.last!) (conflict)"
    }

    // MARK: the view

    func view() -> [String: ViewNode] {
        var v: [String: ViewNode] = [:]
        for (p, n) in served {
            switch n { case .folder: v[p] = .folder; case .file(let c, _): v[p] = .file(c) }
        }
        for (p, d) in local {
            // A dirty file hides whatever the remote has under its name and keeps its folders.
            for q in v.keys where isUnder(q, p) { v[q] = nil }
            v[p] = .file(d.content)
            var a = parentPath(p)
            while a != "/" { if case .file? = v[a] {} else { v[a] = .folder }; a = parentPath(a) }
        }
        return v
    }

    func viewNode(_ p: String) -> ViewNode? { p == "/" ? .folder : view()[p] }

    /// Where the lookups of a path end (the kernel resolves it one name at a time).
    func resolve(_ p: String, view v: [String: ViewNode]) -> ProviderError.Kind? {
        var at = "/"
        for comp in p.split(separator: "/") {
            if at != "/" { guard case .folder? = v[at] else { return .notAFolder } }
            at = join(at, String(comp))
            if v[at] == nil { return .notFound }
        }
        return nil
    }

    func children(_ folder: String, view v: [String: ViewNode]) -> [String: Bool] {
        var r: [String: Bool] = [:]
        for (p, n) in v where parentPath(p) == folder && p != "/" {
            let name = Self.isConflictKey(p) ? Self.conflictDisplay(p) : namePart(p)
            if case .folder = n { r[name] = true } else { r[name] = false }
        }
        return r
    }

    func servedVersion(_ p: String) -> Int? { if case .file(_, let v)? = served[p] { return v }; return nil }

    // MARK: uploads

    enum UploadResult: Equatable { case done, conflict, failed(ProviderError.Kind), refused }

    private mutating func takeUploadFault(_ p: String) -> Fault? {
        guard var q = uploadFaults[p], !q.isEmpty else { return nil }
        q[0].count -= 1
        let f = q[0]
        if q[0].count == 0 { q.removeFirst() }
        uploadFaults[p] = q.isEmpty ? nil : q
        return f
    }

    private mutating func recreateFolders(above p: String) {
        var missing: [String] = []
        var a = parentPath(p)
        while a != "/" && served[a] == nil { missing.append(a); a = parentPath(a) }
        for f in missing.reversed() { served[f] = .folder }
    }

    /// The upload loop of `p` as docs/behaviour.md describes it.
    @discardableResult
    mutating func upload(_ p: String) -> UploadResult {
        guard var d = local[p] else { return .done }
        if d.refused { return .refused }
        var attempts = 0
        let limit = draining ? 3 : 10
        while true {
            if let f = takeUploadFault(p) {
                if f.afterApply {
                    // The server stored it; the answer was lost. The retry finds our bytes there,
                    // and so does a later upload after a change here: that change is based on
                    // them (not a conflict; docs/behaviour.md).
                    realUpload(p, d, conflictsAllowed: false)
                    if let base = local[p]?.base { d.base = base }
                }
                switch f.error {
                case .denied:
                    lostFound.append(d.content)
                    d.refused = true
                    local[p] = d
                    return .refused
                case .versionChanged:
                    if case .file(let c, _)? = served[p], c == d.content { finishUpload(p); return .done }
                    conflict(p, d)
                    return .conflict
                default:
                    attempts += 1
                    if attempts >= limit {
                        d.failed = true
                        local[p] = d
                        return .failed(f.error)
                    }
                    continue
                }
            }
            return realUpload(p, d, conflictsAllowed: true)
        }
    }

    @discardableResult
    private mutating func realUpload(_ p: String, _ d: Dirty, conflictsAllowed: Bool) -> UploadResult {
        recreateFolders(above: p)
        let current = served[p]
        var replaces = false
        if d.base == nil { replaces = current == nil } else { replaces = servedVersion(p) == d.base }
        if replaces {
            served[p] = .file(d.content, version: nextVersion)
            nextVersion += 1
            if !conflictsAllowed {
                // Recorded by the retry, which finds the same bytes; nothing else changes yet.
                local[p]?.base = nextVersion - 1
                return .done
            }
            finishUpload(p)
            return .done
        }
        if case .file(let c, _)? = current, c == d.content { finishUpload(p); return .done }
        guard conflictsAllowed else { return .done }
        conflict(p, d)
        return .conflict
    }

    private mutating func finishUpload(_ p: String) {
        local[p] = nil
        let v = servedVersion(p)
        for (k, h) in handles where h.path == p && !h.orphan { handles[k]!.base = v }
    }

    /// The local content goes beside the remote version as a conflict copy; the handles open on
    /// it follow it (their later writes update the copy).
    private mutating func conflict(_ p: String, _ d: Dirty) {
        recreateFolders(above: p)
        let key = Self.conflictKey(parentPath(p), namePart(p), conflictSeq)
        for k in attached(p) { handles[k]!.path = key; handles[k]!.base = nextVersion }
        served[key] = .file(d.content, version: nextVersion)
        conflictSeq += 1
        nextVersion += 1
        local[p] = nil
    }

    // MARK: steps

    /// `p` is opened here (a read, an open, a truncate by path, the checker's reads): the
    /// clean handles behind the remote are superseded (KnownIssues).
    private mutating func noteOpened(_ p: String) {
        // A newer version at the remote (not none: a handle of a file deleted there is another case).
        guard local[p] == nil, case .file? = served[p] else { return }
        for k in attached(p) where handles[k]!.base != servedVersion(p) { handles[k]!.supersededBehind = true }
    }

    /// The checker opens every file.
    mutating func noteAllOpened() { for p in Set(handles.values.map(\.path)) { noteOpened(p) } }

    private func attached(_ p: String) -> [Int] { handles.filter { $0.value.path == p && !$0.value.orphan }.map(\.key).sorted() }

    private mutating func setContent(_ p: String, _ c: [UInt8], base: Int?) {
        if local[p] == nil {
            local[p] = Dirty(content: c, base: base)
        } else {
            local[p]!.content = c; local[p]!.failed = false; local[p]!.refused = false
        }
        // A handle superseded by a newer open keeps what it had: its reads answer ESTALE.
        for k in attached(p) where !handles[k]!.supersededBehind { handles[k]!.content = c }
    }

    var orphanGroups = 0
    private mutating func orphanHandles(at p: String) {
        var groups: [String: Int] = [:]
        for k in handles.keys.sorted() where !handles[k]!.orphan && (handles[k]!.path == p || isUnder(handles[k]!.path, p)) {
            let path = handles[k]!.path
            if groups[path] == nil { orphanGroups += 1; groups[path] = orphanGroups }
            handles[k]!.orphan = true
            handles[k]!.orphanGroup = groups[path]!
            handles[k]!.orphanedBehind = local[path] == nil && handles[k]!.base != servedVersion(path)
        }
    }

    private mutating func setOrphanContent(_ group: Int, _ c: [UInt8]) {
        for (k, h) in handles where h.orphan && h.orphanGroup == group { handles[k]!.content = c }
    }

    /// Opens `p` for writing (create or open); the caller checked it is a file or absent.
    private mutating func openForWriting(_ p: String, truncate: Bool, slot: Int, v: [String: ViewNode]) {
        if case .file(let c)? = v[p] {
            let base = local[p].map { $0.base } ?? servedVersion(p)
            handles[slot] = Handle(path: p, writable: true, content: c, base: base)
            if truncate { setContent(p, [], base: base) }
            // Nothing is downloaded for a truncating open or an empty file: see KnownIssues.
            if truncate || c.isEmpty { unrecorded.insert(p) }
        } else {
            handles[slot] = Handle(path: p, writable: true, content: [], base: nil)
            local[p] = Dirty(content: [], base: nil)
        }
    }

    private mutating func closeHandle(_ slot: Int) {
        guard let h = handles.removeValue(forKey: slot) else { return }
        if !h.orphan { unrecorded.remove(h.path) }
        // Content a handle held may be left behind in the cache (KnownIssues.openContentLeaksWhenItsFileGoes).
        orphanLeftovers.append(h.content)
        // A superseded handle's close sends nothing (its entry is not the file's any more).
        guard h.writable, !h.orphan, !h.supersededBehind, local[h.path] != nil else { return }
        if handles.values.contains(where: { $0.path == h.path && $0.writable && !$0.orphan && !$0.supersededBehind }) { return }
        upload(h.path)
    }

    /// A write through `h` is a scenario excluded by `KnownIssues`: its file is clean here and
    /// the remote no longer has the version the handle holds (deleted or replaced by a folder).
    private func handleOfVanishedFile(_ h: Handle) -> Bool {
        guard !h.orphan, local[h.path] == nil else { return false }
        if case .file? = served[h.path] { return false }
        // Gone at the remote: a write brings it back (then a conflict copy at upload), unless
        // its name is a folder now or its folder is gone too (KnownIssues).
        var folderGone = false
        var a = parentPath(h.path)
        while a != "/" { if served[a] != .folder { folderGone = true }; a = parentPath(a) }
        return served[h.path] != nil || folderGone ? KnownIssues.writeThroughHandleOfRemotelyDeletedFile : false
    }

    /// Applies `step` and says what the core must answer. `failedByFault`: the core answered
    /// with an injected error; only what happened before the failing call is applied.
    mutating func apply(_ step: Step, failedByFault: Bool = false) -> Expect {
        let v = view()
        switch step {
        case .create(let p, let slot):
            guard handles[slot] == nil else { return .skip }
            if let e = resolve(parentPath(p), view: v) { return .error(e) }
            if case .file? = v[parentPath(p)] { return .error(.notAFolder) }
            if case .folder? = v[p] { return .error(.isAFolder) }
            if v[p] == nil, lingering.contains(p), KnownIssues.contentOfAFileGoneWhileOpenReusedByANewFile { return .skip }
            if failedByFault { return .ok }
            noteOpened(p)
            openForWriting(p, truncate: true, slot: slot, v: v)
            return .ok
        case .openWrite(let p, let truncate, let slot):
            guard handles[slot] == nil else { return .skip }
            if let e = resolve(p, view: v) { return .error(e) }
            if case .folder? = v[p] { return .error(.isAFolder) }
            if failedByFault { return .ok }
            noteOpened(p)
            openForWriting(p, truncate: truncate, slot: slot, v: v)
            return .ok
        case .write(let slot, let offset, let length, let fill):
            guard let h = handles[slot], h.writable, !handleOfVanishedFile(h) else { return .skip }
            if h.supersededBehind && !h.orphan { return .error(.versionChanged) }
            var c = h.content
            // pwrite of nothing changes nothing (it does not extend the file), but the core
            // counts it as a change all the same: the file becomes dirty.
            if length > 0 {
                if c.count < offset + length { c += [UInt8](repeating: 0, count: offset + length - c.count) }
                c.replaceSubrange(offset..<(offset + length), with: pattern(offset: offset, length: length, fill: fill))
            }
            if h.orphan { setOrphanContent(h.orphanGroup, c); return .ok }
            setContent(h.path, c, base: h.base)
            return .ok
        case .truncate(let slot, let size):
            guard let h = handles[slot], h.writable, !handleOfVanishedFile(h) else { return .skip }
            if h.orphan && h.orphanedBehind && KnownIssues.truncateThroughOrphanOfAnOutdatedEntry { return .skip }
            if h.supersededBehind && !h.orphan { return .error(.versionChanged) }
            var c = h.content
            if c.count > size { c.removeLast(c.count - size) } else { c += [UInt8](repeating: 0, count: size - c.count) }
            if h.orphan { setOrphanContent(h.orphanGroup, c); return .ok }
            setContent(h.path, c, base: h.base)
            return .ok
        case .truncatePath(let p, let size):
            if KnownIssues.truncateByPathBesideAnOpenWriterUploadsAtOnce,
               handles.values.contains(where: { $0.path == p && $0.writable && !$0.orphan }) { return .skip }
            if let e = resolve(p, view: v) { return .error(e) }
            if case .folder? = v[p] { return .error(.isAFolder) }
            if failedByFault { return .ok }
            guard case .file(var c)? = v[p] else { return .error(.notFound) }
            noteOpened(p)
            let base = local[p].map { $0.base } ?? servedVersion(p)
            if c.count > size { c.removeLast(c.count - size) } else { c += [UInt8](repeating: 0, count: size - c.count) }
            setContent(p, c, base: base)
            unrecorded.remove(p)
            // Its own handle closes: the upload starts unless another writer has the file open
            // (a superseded handle is none: its writes are refused).
            if !handles.values.contains(where: { $0.path == p && $0.writable && !$0.orphan && !$0.supersededBehind }) { upload(p) }
            return .ok
        case .fsync(let slot):
            guard let h = handles[slot] else { return .skip }
            if !h.orphan { unrecorded.remove(h.path) }
            guard h.writable, !h.orphan, local[h.path] != nil else { return .ok }
            switch upload(h.path) {
            case .done, .conflict: return .ok
            case .failed(let k): return .error(k)
            case .refused: return .error(.denied)
            }
        case .close(let slot):
            guard handles[slot] != nil else { return .skip }
            closeHandle(slot)
            return .ok
        case .closeRefused(let slot, let error):
            // (A conflict copy's path is not one the harness can arm a fault for.)
            guard let h = handles[slot], h.writable, !h.orphan, !h.supersededBehind, !Self.isConflictKey(h.path), let d = local[h.path], !d.failed, !d.refused,
                  handles.values.filter({ $0.path == h.path }).count == 1,
                  uploadFaults[h.path] == nil else { return .skip }
            if error == .versionChanged, KnownIssues.conflictCopyWithoutRemoteChangeServesLocalBytes,
               d.base != nil, d.base == servedVersion(h.path) { return .skip }
            uploadFaults[h.path] = [Fault(kind: .upload, path: h.path, count: 1, error: error)]
            closeHandle(slot)
            return .ok
        case .readHandle(let slot):
            guard let h = handles[slot] else { return .skip }
            if h.orphan && h.orphanedBehind && KnownIssues.truncateThroughOrphanOfAnOutdatedEntry { return .skip }
            if h.supersededBehind && !h.orphan && !h.content.isEmpty { return .error(.versionChanged) }
            return .bytes(h.content)
        case .read(let p):
            if let e = resolve(p, view: v) { return .error(e) }
            guard case .file(let c)? = v[p] else { return .error(.isAFolder) }
            noteOpened(p)
            return .bytes(c)
        case .list(let p):
            if let e = resolve(p, view: v) { return .error(e) }
            if case .file? = v[p] { return .error(.notAFolder) }
            return .listing(children(p, view: v))
        case .mkdir(let p):
            if let e = resolve(parentPath(p), view: v) { return .error(e) }
            if case .file? = v[parentPath(p)] { return .error(.notAFolder) }
            if v[p] != nil { return .error(.exists) }
            if failedByFault { return .ok }
            served[p] = .folder
            return .ok
        case .rmdir(let p):
            if let e = resolve(p, view: v) { return .error(e) }
            guard p != "/" else { return .skip }
            if case .file? = v[p] { return .error(.notAFolder) }
            if !children(p, view: v).isEmpty { return .error(.notEmpty) }
            if failedByFault { return .ok }
            served[p] = nil
            return .ok
        case .unlink(let p):
            if let e = resolve(p, view: v) { return .error(e) }
            if case .folder? = v[p] { return .error(.isAFolder) }
            if failedByFault { return .ok }
            if let d = local[p], d.base == nil {
                local[p] = nil  // never uploaded: nothing is sent
            } else {
                local[p] = nil
                if case .file? = served[p] { served[p] = nil }
            }
            orphanHandles(at: p)
            return .ok
        case .rename(let a, let b, let noReplace):
            if let e = resolve(a, view: v) { return .error(e) }
            if let e = resolve(parentPath(b), view: v) { return .error(e) }
            if case .file? = v[parentPath(b)] { return .error(.notAFolder) }
            if a == "/" || b == "/" || isUnder(b, a) { return .skip }
            if a == b { return .ok }
            let source = v[a]!
            if let existing = v[b] {
                if noReplace { return .error(.exists) }
                switch (existing, source) {
                case (.folder, .file): return .error(.isAFolder)
                case (.file, .folder): return .error(.notAFolder)
                case (.folder, .folder):
                    // Not empty: what the remote has in it, or a file written in it here and not
                    // uploaded yet (which the core may have uploaded by now: either way).
                    if served.keys.contains(where: { parentPath($0) == b }) || local.keys.contains(where: { isUnder($0, b) }) {
                        return .error(.notEmpty)
                    }
                default: break
                }
            }
            // A refused file never uploaded is renamed here and sent under its new name.
            if v[b] == nil, let d = local[a], d.refused, d.base == nil {
                if failedByFault { return .ok }
                local[a] = nil
                local[b] = Dirty(content: d.content, base: nil)
                for (k, h) in handles where !h.orphan && h.path == a { handles[k]!.path = b }
                upload(b)
                return .ok
            }
            // Pending uploads of the source finish first (their failure fails the rename).
            for p in local.keys.sorted() where p == a || isUnder(p, a) {
                if case .failed(let k) = upload(p) { return .error(k) }
                if local[p] != nil { return .error(.denied) }  // refused: not generated
            }
            if v[b] != nil, local[b] != nil {
                upload(b)
                if local[b] != nil, KnownIssues.renameOverAFileWhoseUploadFailedKeepsItsDirtyState { return .skip }
            }
            // The flush may have ended in a conflict copy that took the name away.
            if view()[a] == nil { return .error(.notFound) }
            if failedByFault { return .ok }
            // The remote moves what it has; dirty state moves along.
            let moved = served.filter { $0.key == a || isUnder($0.key, a) }
            if case .file? = v[b] { orphanHandles(at: b) }
            for k in served.keys where k == b || isUnder(k, b) { served[k] = nil }
            for (k, _) in moved { served[k] = nil }
            for (k, n) in moved { served[b + k.dropFirst(a.count)] = n }
            local[b] = nil
            for (k, d) in local where k == a || isUnder(k, a) {
                local[k] = nil
                local[b + k.dropFirst(a.count)] = d
            }
            for (k, h) in handles where !h.orphan && (h.path == a || isUnder(h.path, a)) {
                handles[k]!.path = b + h.path.dropFirst(a.count)
            }
            return .ok
        case .remoteWrite(let p, let length, let fill):
            guard case .folder? = served[parentPath(p)], served[p] != .folder else { return .skip }
            served[p] = .file(pattern(offset: 0, length: length, fill: fill), version: nextVersion)
            nextVersion += 1
            return .ok
        case .remoteDelete(let p):
            guard p != "/", served[p] != nil else { return .skip }
            if KnownIssues.dirtyFileHiddenWhenItsFolderGoesAtTheRemote, local.keys.contains(where: { isUnder($0, p) }) { return .skip }
            for k in served.keys where k == p || isUnder(k, p) { served[k] = nil }
            noteGone(p)
            return .ok
        case .remoteRename(let a, let b):
            guard a != "/", served[a] != nil, served[b] == nil, case .folder? = served[parentPath(b)],
                  !isUnder(b, a), a != b else { return .skip }
            if KnownIssues.dirtyFileHiddenWhenItsFolderGoesAtTheRemote, local.keys.contains(where: { isUnder($0, a) }) { return .skip }
            let moved = served.filter { $0.key == a || isUnder($0.key, a) }
            for (k, _) in moved { served[k] = nil }
            for (k, n) in moved { served[b + k.dropFirst(a.count)] = n }
            noteGone(a)
            return .ok
        case .remoteMkdir(let p):
            guard case .folder? = served[parentPath(p)], served[p] == nil else { return .skip }
            if KnownIssues.localReplaceDisplacesAFolderAtTheName, local[p]?.base != nil { return .skip }
            served[p] = .folder
            return .ok
        case .fail(let kind, let count, let error, let path, let afterApply):
            if kind == .upload, let path {
                uploadFaults[path, default: []].append(Fault(kind: kind, path: path, count: count, error: error, afterApply: afterApply))
            }
            return .ok
        case .crash:
            if KnownIssues.truncatingOpenNotRecordedUntilClose,
               unrecorded.contains(where: { local[$0] != nil }) { return .skip }
            orphanLeftovers += handles.values.map(\.content)
            handles.removeAll()
            // The next core resumes every upload in the journal.
            for p in local.keys.sorted() { upload(p) }
            return .ok
        case .check:
            noteAllOpened()
            return .ok
        }
    }

    /// Unmount: every handle is released, then the uploads drain (no faults any more).
    mutating func closeAllAndDrain() {
        uploadFaults.removeAll()
        for slot in handles.keys.sorted() { closeHandle(slot) }
        draining = true
        for p in local.keys.sorted() { upload(p) }
        draining = false
    }
}
