import Foundation

/// A small, fast, seeded PRNG (SplitMix64): the same seed gives the same bytes on every run.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Writes a deterministic test tree into a folder (a server's served folder, or a local folder).
///
/// Layout (relative to the root):
/// - `many/f00000.txt` … `many/f04999.txt`: 5,000 small files (0–299 bytes each, deterministic text)
/// - `deep/file0.txt`, `deep/l1/file1.txt`, … `deep/l1/…/l8/file8.txt`: a chain 8 levels deep
/// - `awkward/files/<name>` (a file) and `awkward/dirs/<name>/` (a folder holding `inside <name>.txt`)
///   for every name in `awkwardNames`
/// - `empty.txt`: 0 bytes
/// - `big.bin`: 64 MiB of seeded random bytes
/// - `old/…`: files whose mtime is set in the past (see `oldFiles`)
public struct TreeGenerator: Sendable {
    public static let awkwardNames = [
        "a b", "ünïcödé ☃", "#hash", "100%", "what?", "a+b", "it's", "a&b",
        "semi;colon", "co:lon", "tab\there", "trailing dots...",
    ]
    public static let smallFileCount = 5_000
    public static let manyFolder = "many"
    public static let deepLevels = 8
    public static let bigFile = "big.bin"
    public static let bigFileSize = 64 * 1024 * 1024
    public static let emptyFile = "empty.txt"
    /// Files with mtimes in the past: relative path -> seconds since 1970.
    public static let oldFiles: [(path: String, mtime: Int)] = [
        ("old/y2001.txt", 1_000_000_000),
        ("old/y1990.txt", 631_152_000),
        ("old/y2017.txt", 1_500_000_000),
        ("old/awkward ü #1.txt", 1_234_567_890),
    ]

    public let seed: UInt64
    public var includeBigFile: Bool
    public var smallFileCount: Int

    public init(seed: UInt64 = 0xFA7F5, includeBigFile: Bool = true, smallFileCount: Int = TreeGenerator.smallFileCount) {
        self.seed = seed
        self.includeBigFile = includeBigFile
        self.smallFileCount = smallFileCount
    }

    public static func smallFileName(_ i: Int) -> String { String(format: "f%05d.txt", i) }

    /// Deterministic content for small file `i`.
    public static func smallFileContent(_ i: Int) -> Data {
        let size = (i &* 7919) % 300
        let line = "favfs small file \(i)\n"
        var s = ""
        while s.utf8.count < size { s += line }
        return Data(s.utf8.prefix(size))
    }

    /// Writes the tree into `root` (created if missing).
    public func write(into root: URL) throws {
        let fm = FileManager.default
        try fm.createDirectory(at: root, withIntermediateDirectories: true)

        // 5,000 small files in one folder.
        let many = root.appendingPathComponent(Self.manyFolder)
        try fm.createDirectory(at: many, withIntermediateDirectories: true)
        for i in 0..<smallFileCount {
            try Self.smallFileContent(i).write(to: many.appendingPathComponent(Self.smallFileName(i)))
        }

        // A chain 8 levels deep, a file at each level.
        var dir = root.appendingPathComponent("deep")
        for level in 0...Self.deepLevels {
            if level > 0 { dir = dir.appendingPathComponent("l\(level)") }
            try fm.createDirectory(at: dir, withIntermediateDirectories: true)
            try Data("level \(level)\n".utf8).write(to: dir.appendingPathComponent("file\(level).txt"))
        }

        // Awkward names, as files and as folders.
        let awkFiles = root.appendingPathComponent("awkward/files")
        let awkDirs = root.appendingPathComponent("awkward/dirs")
        try fm.createDirectory(at: awkFiles, withIntermediateDirectories: true)
        try fm.createDirectory(at: awkDirs, withIntermediateDirectories: true)
        for (n, name) in Self.awkwardNames.enumerated() {
            try Data("awkward file \(n): \(name)\n".utf8).write(to: awkFiles.appendingPathComponent(name))
            let d = awkDirs.appendingPathComponent(name)
            try fm.createDirectory(at: d, withIntermediateDirectories: true)
            try Data("inside \(name)\n".utf8).write(to: d.appendingPathComponent("inside \(name).txt"))
        }

        // An empty file.
        try Data().write(to: root.appendingPathComponent(Self.emptyFile))

        // 64 MiB of seeded random bytes, in 1 MiB blocks.
        if includeBigFile {
            try Self.writeRandomFile(at: root.appendingPathComponent(Self.bigFile), size: Self.bigFileSize, seed: seed)
        }

        // Files with mtimes in the past (set last, and the folder too).
        try fm.createDirectory(at: root.appendingPathComponent("old"), withIntermediateDirectories: true)
        for (path, mtime) in Self.oldFiles {
            let url = root.appendingPathComponent(path)
            try Data("written at \(mtime)\n".utf8).write(to: url)
            try Self.setMTime(url, mtime)
        }
    }

    public static func writeRandomFile(at url: URL, size: Int, seed: UInt64) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let h = try FileHandle(forWritingTo: url)
        defer { try? h.close() }
        var rng = SeededRandom(seed: seed)
        let block = 1 << 20
        var buf = [UInt64](repeating: 0, count: block / 8)
        var written = 0
        while written < size {
            buf.withUnsafeMutableBufferPointer { p in
                for i in 0..<p.count { p[i] = rng.next() }
            }
            let n = min(block, size - written)
            let data = buf.withUnsafeBytes { Data($0.prefix(n)) }
            try h.write(contentsOf: data)
            written += n
        }
    }

    public static func setMTime(_ url: URL, _ seconds: Int) throws {
        var times = [timeval(tv_sec: seconds, tv_usec: 0), timeval(tv_sec: seconds, tv_usec: 0)]
        guard utimes(url.path, &times) == 0 else { throw ShellError("utimes \(url.path): errno \(errno)") }
    }
}
