import Foundation
import TestSupport
import XCTest

/// A seeded random run of system calls, done twice at every step: on the mount and on a plain
/// local folder (the model). Several descriptors stay open at once; every open mode, `pwrite`
/// far past EOF (holes), `pread` past EOF, `ftruncate` up and down, `fstat`, `fsync`, writes
/// through `mmap` + `msync`, `close`, `rename` over open files and `unlink` of open files.
/// Every result (return value, errno, bytes, size) must be the model's. The first difference
/// fails the test with the seed and the last operations, so it can be replayed:
/// `FAVFS_MODEL_SEED=N FAVFS_MODEL_STEPS=M swift test --skip-build --filter DescriptorModel`.
struct DescriptorModel {
    let mountRoot: String
    let modelRoot: String
    let seed: UInt64
    let steps: Int
    /// How far past EOF a write or truncate may reach (uploads of holes cost their zeros).
    var farPastEOF = 1 << 20

    private static let names = ["f0", "f1", "f2", "f3", "d/f0", "d/f1"]

    private struct Slot {
        var path: String
        var mount: Int32
        var model: Int32
        var flags: Int32
        /// The step that opened it: a stable name in the log.
        var opened: Int
        var label: String { "fd@\(opened) (\(path))" }
    }

    /// Runs the steps; returns the failure (with the last operations) or nil.
    func run() -> String? {
        var rng = SeededRandom(seed: seed)
        var slots: [Slot] = []
        var history: [String] = []
        func fail(_ step: Int, _ what: String) -> String {
            "seed \(seed), step \(step): \(what)\nlast operations:\n" + history.suffix(80).joined(separator: "\n")
        }
        for root in [mountRoot, modelRoot] { mkdir(root + "/d", 0o755) }
        defer {
            for s in slots { close(s.mount); close(s.model) }
        }

        for step in 0..<steps {
            let roll = Int.random(in: 0..<100, using: &rng)
            let op: String
            var mismatch: String?
            if roll < 14 || slots.isEmpty {
                guard slots.count < 8 else { continue }
                let path = Self.names.randomElement(using: &rng)!
                let flags = Self.randomFlags(&rng)
                let mo = call { open(mountRoot + "/" + path, flags | O_CLOEXEC, 0o644) }
                let ro = call { open(modelRoot + "/" + path, flags | O_CLOEXEC, 0o644) }
                let m = mo.value, r = ro.value
                op = "open \(path) \(Self.describe(flags)) -> mount \(mo) model \(ro)"
                if (m >= 0) != (r >= 0) || mo.errno != ro.errno {
                    mismatch = "open differs"
                }
                if m >= 0 && r >= 0 { slots.append(Slot(path: path, mount: m, model: r, flags: flags, opened: step)) }
                else { if m >= 0 { close(m) }; if r >= 0 { close(r) } }
            } else {
                let i = Int.random(in: 0..<slots.count, using: &rng)
                let s = slots[i]
                let size = Int(Self.size(s.model))
                switch roll {
                case 14..<30:
                    let offset = Self.offset(size: size, far: farPastEOF, &rng)
                    let bytes = Self.bytes(Int.random(in: 1...20_000, using: &rng), &rng)
                    let m = call { bytes.withUnsafeBytes { pwrite(s.mount, $0.baseAddress, $0.count, off_t(offset)) } }
                    let r = call { bytes.withUnsafeBytes { pwrite(s.model, $0.baseAddress, $0.count, off_t(offset)) } }
                    op = "pwrite \(s.label) at \(offset) len \(bytes.count) -> mount \(m) model \(r)"
                    if m != r { mismatch = "pwrite differs" }
                case 30..<38:
                    let bytes = Self.bytes(Int.random(in: 1...9_000, using: &rng), &rng)
                    let m = call { bytes.withUnsafeBytes { write(s.mount, $0.baseAddress, $0.count) } }
                    let r = call { bytes.withUnsafeBytes { write(s.model, $0.baseAddress, $0.count) } }
                    op = "write \(s.label) len \(bytes.count) -> mount \(m) model \(r)"
                    if m != r { mismatch = "write differs" }
                case 38..<54:
                    let offset = Int.random(in: 0...(size + 5000), using: &rng)
                    let length = Int.random(in: 1...70_000, using: &rng)
                    let (m, mb) = Self.pread(s.mount, offset, length)
                    let (r, rb) = Self.pread(s.model, offset, length)
                    op = "pread \(s.label) at \(offset) len \(length) -> mount \(m) model \(r)"
                    if m != r { mismatch = "pread result differs" }
                    else if mb != rb { mismatch = "pread bytes differ (first at \(Self.firstDifference(mb, rb)))" }
                case 54..<62:
                    let target = Int.random(in: 0...100, using: &rng) < 10
                        ? size + Int.random(in: 0...farPastEOF, using: &rng)
                        : Int.random(in: 0...(size + 3000), using: &rng)
                    let m = call { ftruncate(s.mount, off_t(target)) }
                    let r = call { ftruncate(s.model, off_t(target)) }
                    op = "ftruncate \(s.label) to \(target) -> mount \(m) model \(r)"
                    if m != r { mismatch = "ftruncate differs" }
                case 62..<68:
                    let m = Self.fstatSizeAndLinks(s.mount)
                    let r = Self.fstatSizeAndLinks(s.model)
                    op = "fstat \(s.label) -> mount \(m) model \(r)"
                    if m != r { mismatch = "fstat differs" }
                case 68..<72:
                    let m = call { fsync(s.mount) }
                    let r = call { fsync(s.model) }
                    op = "fsync \(s.label) -> mount \(m) model \(r)"
                    if m != r { mismatch = "fsync differs" }
                case 72..<78:
                    guard size > 0 else { continue }
                    let page = 4096
                    let offset = Int.random(in: 0...((size - 1) / page), using: &rng) * page
                    let length = min(size - offset, Int.random(in: 1...(3 * page), using: &rng))
                    let at = Int.random(in: 0..<length, using: &rng)
                    let bytes = Self.bytes(min(length - at, Int.random(in: 1...2000, using: &rng)), &rng)
                    let m = Self.mmapWrite(s.mount, offset: offset, length: length, at: at, bytes: bytes)
                    let r = Self.mmapWrite(s.model, offset: offset, length: length, at: at, bytes: bytes)
                    op = "mmap \(s.label) [\(offset), +\(length)) write \(bytes.count) at +\(at), msync -> mount \(m) model \(r)"
                    if m != r { mismatch = "mmap + msync differs" }
                case 78..<86:
                    let m = call { close(s.mount) }
                    let r = call { close(s.model) }
                    slots.remove(at: i)
                    op = "close \(s.label) -> mount \(m) model \(r)"
                    if m != r { mismatch = "close differs" }
                case 86..<91:
                    let from = Self.names.randomElement(using: &rng)!, to = Self.names.randomElement(using: &rng)!
                    let m = call { rename(mountRoot + "/" + from, mountRoot + "/" + to) }
                    let r = call { rename(modelRoot + "/" + from, modelRoot + "/" + to) }
                    op = "rename \(from) -> \(to) -> mount \(m) model \(r)"
                    if m != r { mismatch = "rename differs" }
                case 91..<95:
                    let path = Self.names.randomElement(using: &rng)!
                    let m = call { unlink(mountRoot + "/" + path) }
                    let r = call { unlink(modelRoot + "/" + path) }
                    op = "unlink \(path) -> mount \(m) model \(r)"
                    if m != r { mismatch = "unlink differs" }
                default:
                    let path = Self.names.randomElement(using: &rng)!
                    let m = Self.contents(mountRoot + "/" + path), r = Self.contents(modelRoot + "/" + path)
                    op = "read whole \(path) -> mount \(Self.describe(m)) model \(Self.describe(r))"
                    if m != r { mismatch = "whole-file read differs" }
                }
            }
            history.append("\(step): \(op)")
            if let mismatch { return fail(step, mismatch) }
        }
        for s in slots {
            if close(s.mount) != 0 { return fail(steps, "close of \(s.path) on the mount failed: \(String(cString: strerror(errno)))") }
            close(s.model)
        }
        slots = []
        for path in Self.names {
            let m = Self.contents(mountRoot + "/" + path), r = Self.contents(modelRoot + "/" + path)
            if m != r { return fail(steps, "at the end, \(path): mount \(Self.describe(m)) model \(Self.describe(r))") }
        }
        return nil
    }

    /// Compares a folder (the server's, after unmount) with the model's files.
    func compareServer(_ serverRoot: String) -> String? {
        for path in Self.names {
            let s = Self.contents(serverRoot + "/" + path), r = Self.contents(modelRoot + "/" + path)
            if s != r { return "seed \(seed): after unmount the server's \(path) is \(Self.describe(s)), the model's \(Self.describe(r))" }
        }
        return nil
    }

    // MARK: helpers

    /// Result and errno of a call returning -1 on failure, as one comparable value.
    private struct Outcome<T: Equatable>: Equatable, CustomStringConvertible {
        let value: T
        let errno: Int32
        var description: String { errno == 0 ? "\(value)" : "\(value) (\(String(cString: strerror(errno))))" }
    }

    private func call<T: BinaryInteger>(_ body: () -> T) -> Outcome<T> {
        errno = 0
        let v = body()
        return Outcome(value: v, errno: v < 0 ? errno : 0)
    }

    private static func randomFlags(_ rng: inout SeededRandom) -> Int32 {
        var flags = [O_RDONLY, O_WRONLY, O_RDWR, O_RDWR].randomElement(using: &rng)!
        if Int.random(in: 0..<100, using: &rng) < 20 { flags |= O_APPEND }
        if flags != O_RDONLY && Int.random(in: 0..<100, using: &rng) < 15 { flags |= O_TRUNC }
        if Int.random(in: 0..<100, using: &rng) < 55 {
            flags |= O_CREAT
            if Int.random(in: 0..<100, using: &rng) < 20 { flags |= O_EXCL }
        }
        return flags
    }

    static func describe(_ flags: Int32) -> String {
        var parts = [flags & O_ACCMODE == O_RDONLY ? "O_RDONLY" : flags & O_ACCMODE == O_WRONLY ? "O_WRONLY" : "O_RDWR"]
        for (bit, name) in [(O_APPEND, "O_APPEND"), (O_TRUNC, "O_TRUNC"), (O_CREAT, "O_CREAT"), (O_EXCL, "O_EXCL")] where flags & bit != 0 {
            parts.append(name)
        }
        return parts.joined(separator: "|")
    }

    private static func offset(size: Int, far: Int, _ rng: inout SeededRandom) -> Int {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<70: return Int.random(in: 0...(size + 100), using: &rng)
        case 70..<95: return size + Int.random(in: 0...70_000, using: &rng)
        default: return size + Int.random(in: 0...far, using: &rng)
        }
    }

    private static func bytes(_ n: Int, _ rng: inout SeededRandom) -> [UInt8] {
        (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    private static func size(_ fd: Int32) -> Int64 {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int64(st.st_size) : 0
    }

    /// Size and link count (0 once deleted while open), or the errno.
    private static func fstatSizeAndLinks(_ fd: Int32) -> String {
        var st = stat()
        return fstat(fd, &st) == 0 ? "size \(st.st_size) nlink \(st.st_nlink)" : "-1 (\(String(cString: strerror(errno))))"
    }

    private static func pread(_ fd: Int32, _ offset: Int, _ length: Int) -> (String, [UInt8]) {
        var buf = [UInt8](repeating: 0, count: length)
        errno = 0
        let n = buf.withUnsafeMutableBytes { Glibc.pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        if n < 0 { return ("-1 (\(String(cString: strerror(errno))))", []) }
        return ("\(n)", Array(buf.prefix(n)))
    }

    /// Maps `[offset, offset+length)` shared, writes `bytes` at `at` within it, msyncs, unmaps.
    private static func mmapWrite(_ fd: Int32, offset: Int, length: Int, at: Int, bytes: [UInt8]) -> String {
        errno = 0
        guard let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset)), p != MAP_FAILED else {
            return "mmap -1 (\(String(cString: strerror(errno))))"
        }
        defer { munmap(p, length) }
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress { memcpy(p + at, base, raw.count) }
        }
        let rc = msync(p, length, MS_SYNC)
        return rc == 0 ? "ok" : "msync -1 (\(String(cString: strerror(errno))))"
    }

    private static func contents(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    private static func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
    }

    static func describe(_ bytes: [UInt8]?) -> String { WriteBackChecks.describe(bytes) }
}
