import Foundation
import FavFSCore

/// Makes a run from a seed: each step is picked against a dry copy of the model (so most
/// steps make sense: they name files that exist, handles that are open), with a share of
/// names that do not exist or have the wrong kind.
struct Generator {
    static let folderNames = ["d", "é"]
    static let fileNames = ["a.txt", "b", "c.md"]
    static let slots = 3

    static func steps(seed: UInt64, count: Int) -> [Step] {
        var rng = SplitMix64(seed: seed)
        var m = RefModel()
        var out: [Step] = []
        // Something to start from: a folder and a file or two at the remote.
        for s in [Step.remoteMkdir("/d"), .remoteWrite("/a.txt", length: 100 + rng.int(3000), fill: UInt8(rng.int(256))),
                  .remoteWrite("/d/b", length: rng.int(5000), fill: UInt8(rng.int(256)))] {
            _ = m.apply(s); out.append(s)
        }
        var attempts = 0
        while out.count < count && attempts < count * 20 {
            attempts += 1
            let step = pick(&rng, m)
            var dry = m
            if dry.apply(step) == .skip { continue }
            m = dry
            out.append(step)
        }
        return out
    }

    private static func folders(_ v: [String: RefModel.ViewNode]) -> [String] {
        ["/"] + v.filter { $0.value == .folder && !RefModel.isConflictKey($0.key) }.map(\.key).sorted()
    }

    private static func files(_ v: [String: RefModel.ViewNode]) -> [String] {
        v.filter { if case .file = $0.value { return !RefModel.isConflictKey($0.key) }; return false }.map(\.key).sorted()
    }

    private static func anyPath(_ rng: inout SplitMix64, _ v: [String: RefModel.ViewNode], fileName: Bool = true) -> String {
        let parent = rng.chance(0.9) ? rng.pick(folders(v)) : rng.pick(["/d", "/e", "/d/e", "/a.txt"])
        let names = fileName ? (rng.chance(0.85) ? fileNames : folderNames) : (rng.chance(0.85) ? folderNames : fileNames)
        return join(parent, rng.pick(names))
    }

    private static func file(_ rng: inout SplitMix64, _ v: [String: RefModel.ViewNode]) -> String {
        let f = files(v)
        return f.isEmpty || rng.chance(0.1) ? anyPath(&rng, v) : rng.pick(f)
    }

    private static func folder(_ rng: inout SplitMix64, _ v: [String: RefModel.ViewNode]) -> String {
        let f = folders(v).filter { $0 != "/" }
        return f.isEmpty || rng.chance(0.15) ? anyPath(&rng, v, fileName: false) : rng.pick(f)
    }

    private static func length(_ rng: inout SplitMix64) -> Int {
        switch rng.int(20) {
        case 0: return 0
        case 1: return 130_000 + rng.int(200_000)   // more than one download chunk
        default: return 1 + rng.int(6000)
        }
    }

    static func pick(_ rng: inout SplitMix64, _ m: RefModel) -> Step {
        let v = m.view()
        let open = m.handles.keys.sorted()
        let writable = m.handles.filter { $0.value.writable }.map(\.key).sorted()
        let free = (0..<slots).filter { m.handles[$0] == nil }
        let fill = UInt8(rng.int(256))
        let r = rng.int(1000)
        switch r {
        case 0..<70:
            guard let s = free.first else { return .close(slot: rng.pick(open)) }
            return .create(anyPath(&rng, v), slot: s)
        case 70..<130:
            guard let s = free.first else { return .close(slot: rng.pick(open)) }
            return .openWrite(file(&rng, v), truncate: rng.chance(0.3), slot: s)
        case 130..<300:
            guard !writable.isEmpty else { return .read(file(&rng, v)) }
            let s = rng.pick(writable)
            let size = m.handles[s]!.content.count
            let offset = rng.chance(0.5) ? size : rng.int(size + 2000)
            return .write(slot: s, offset: offset, length: length(&rng), fill: fill)
        case 300..<330:
            guard !writable.isEmpty else { return .truncatePath(file(&rng, v), size: rng.int(4000)) }
            let s = rng.pick(writable)
            return .truncate(slot: s, size: rng.int(m.handles[s]!.content.count + 3000))
        case 330..<350:
            return .truncatePath(file(&rng, v), size: rng.chance(0.3) ? 0 : rng.int(5000))
        case 350..<400:
            guard !open.isEmpty else { return .list(folder(&rng, v)) }
            return .fsync(slot: rng.pick(open))
        case 400..<500:
            guard !open.isEmpty else { return .read(file(&rng, v)) }
            return .close(slot: rng.pick(open))
        case 500..<520:
            guard !writable.isEmpty else { return .read(file(&rng, v)) }
            return .closeRefused(slot: rng.pick(writable), error: rng.chance(0.5) ? .denied : .versionChanged)
        case 520..<550:
            guard !open.isEmpty else { return .read(file(&rng, v)) }
            return .readHandle(slot: rng.pick(open))
        case 550..<610: return .read(file(&rng, v))
        case 610..<640: return .list(rng.chance(0.3) ? "/" : folder(&rng, v))
        case 640..<680: return .mkdir(anyPath(&rng, v, fileName: false))
        case 680..<700: return .rmdir(folder(&rng, v))
        case 700..<740: return .unlink(file(&rng, v))
        case 740..<790:
            let from = rng.chance(0.75) ? file(&rng, v) : folder(&rng, v)
            let to = rng.chance(0.5) ? anyPath(&rng, v) : file(&rng, v)
            return .rename(from, to, noReplace: rng.chance(0.2))
        case 790..<860:
            let p = rng.chance(0.6) ? file(&rng, v) : anyPath(&rng, v)
            return .remoteWrite(p, length: length(&rng), fill: fill)
        case 860..<885: return .remoteDelete(rng.chance(0.7) ? file(&rng, v) : folder(&rng, v))
        case 885..<900: return .remoteRename(file(&rng, v), anyPath(&rng, v))
        case 900..<915: return .remoteMkdir(anyPath(&rng, v, fileName: false))
        case 915..<975:
            // Faults: uploads of one file (transient, or a lost answer), or any call of a kind.
            if rng.chance(0.5) {
                let p = m.handles.values.filter(\.writable).map(\.path).sorted().first ?? file(&rng, v)
                if rng.chance(0.25) { return .fail(.upload, count: 1, error: .timedOut, path: p, afterApply: true) }
                return .fail(.upload, count: rng.pick([1, 2, 3, 12]), error: rng.chance(0.5) ? .timedOut : .serverError, path: p)
            }
            let kind = rng.pick([CallKind.list, .read, .createFolder, .delete, .move, .stat])
            return .fail(kind, count: 1 + rng.int(3), error: rng.chance(0.5) ? .timedOut : .serverError)
        case 975..<990: return .crash
        default: return .check
        }
    }
}
