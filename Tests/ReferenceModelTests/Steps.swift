import Foundation
import FavFSCore

/// One step of a run. Handles are named by small slot numbers; a step whose slot is empty (or
/// whose precondition no longer holds after shrinking) is skipped, so any sub-list of a run
/// is itself a valid run. `description` is Swift that pastes into `ReferenceModelTests.replay`.
enum Step: Equatable, CustomStringConvertible, Sendable {
    /// create(2) without O_EXCL: a new file, or an existing one truncated; the handle goes to `slot`.
    case create(String, slot: Int)
    /// open(2) for writing, with or without O_TRUNC.
    case openWrite(String, truncate: Bool, slot: Int)
    /// pwrite of `length` bytes (a pattern from `fill`) at `offset`.
    case write(slot: Int, offset: Int, length: Int, fill: UInt8)
    /// ftruncate through the handle.
    case truncate(slot: Int, size: Int)
    /// truncate(2) by path (no handle).
    case truncatePath(String, size: Int)
    case fsync(slot: Int)
    case close(slot: Int)
    /// The last handle of a dirty file closes and its upload is refused by the server
    /// (`.denied`) or told the file changed (`.versionChanged`). Skipped unless the handle is
    /// the only one open on that file.
    case closeRefused(slot: Int, error: ProviderError.Kind)
    /// Reads the whole file through an open handle.
    case readHandle(slot: Int)
    /// open O_RDONLY, read all, close.
    case read(String)
    /// readdir.
    case list(String)
    case mkdir(String)
    case rmdir(String)
    case unlink(String)
    case rename(String, String, noReplace: Bool)
    /// Another client writes the file in the served folder (whole content, a new mtime).
    case remoteWrite(String, length: Int, fill: UInt8)
    /// Another client removes the file or folder (recursively).
    case remoteDelete(String)
    case remoteRename(String, String)
    case remoteMkdir(String)
    /// The next `count` provider calls of `kind` (for `path` only, when given) fail with `error`.
    case fail(CallKind, count: Int, error: ProviderError.Kind, path: String? = nil, afterApply: Bool = false)
    /// The core is dropped without shutdown and a new one starts on the same cache dir.
    case crash
    /// Compares the whole view through the core with the model (faults suspended).
    case check

    var description: String {
        func q(_ s: String) -> String { "\"\(s)\"" }
        switch self {
        case .create(let p, let s): return ".create(\(q(p)), slot: \(s))"
        case .openWrite(let p, let t, let s): return ".openWrite(\(q(p)), truncate: \(t), slot: \(s))"
        case .write(let s, let o, let l, let f): return ".write(slot: \(s), offset: \(o), length: \(l), fill: \(f))"
        case .truncate(let s, let n): return ".truncate(slot: \(s), size: \(n))"
        case .truncatePath(let p, let n): return ".truncatePath(\(q(p)), size: \(n))"
        case .fsync(let s): return ".fsync(slot: \(s))"
        case .close(let s): return ".close(slot: \(s))"
        case .closeRefused(let s, let e): return ".closeRefused(slot: \(s), error: .\(e))"
        case .readHandle(let s): return ".readHandle(slot: \(s))"
        case .read(let p): return ".read(\(q(p)))"
        case .list(let p): return ".list(\(q(p)))"
        case .mkdir(let p): return ".mkdir(\(q(p)))"
        case .rmdir(let p): return ".rmdir(\(q(p)))"
        case .unlink(let p): return ".unlink(\(q(p)))"
        case .rename(let a, let b, let n): return ".rename(\(q(a)), \(q(b)), noReplace: \(n))"
        case .remoteWrite(let p, let l, let f): return ".remoteWrite(\(q(p)), length: \(l), fill: \(f))"
        case .remoteDelete(let p): return ".remoteDelete(\(q(p)))"
        case .remoteRename(let a, let b): return ".remoteRename(\(q(a)), \(q(b)))"
        case .remoteMkdir(let p): return ".remoteMkdir(\(q(p)))"
        case .fail(let k, let c, let e, let p, let a):
            return ".fail(.\(k), count: \(c), error: .\(e)\(p.map { ", path: \(q($0))" } ?? "")\(a ? ", afterApply: true" : ""))"
        case .crash: return ".crash"
        case .check: return ".check"
        }
    }
}

/// SplitMix64: small, seedable, the same on every platform.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func int(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
    mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) / 1_000_000 < p }
    mutating func pick<T>(_ a: [T]) -> T { a[int(a.count)] }
}

/// Deterministic file content: `length` bytes from `fill`, different at every offset.
func pattern(offset: Int, length: Int, fill: UInt8) -> [UInt8] {
    (0..<length).map { i in fill &+ UInt8(truncatingIfNeeded: ((offset + i) &* 131) >> 4) }
}

func parentPath(_ p: String) -> String {
    guard let i = p.lastIndex(of: "/"), p != "/" else { return "/" }
    return i == p.startIndex ? "/" : String(p[..<i])
}

func namePart(_ p: String) -> String { String(p[p.index(after: p.lastIndex(of: "/")!)...]) }

func join(_ folder: String, _ name: String) -> String { folder == "/" ? "/" + name : folder + "/" + name }

func isUnder(_ p: String, _ folder: String) -> Bool { folder == "/" ? p != "/" : p.hasPrefix(folder + "/") }
