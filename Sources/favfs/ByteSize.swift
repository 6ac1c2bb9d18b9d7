/// Sizes on the command line: `512M`, `10G`, `1.5G`, `4096B`; binary units.
enum ByteSize {
    /// Whether `s` ends in a unit (a bare `10` is most likely not meant as 10 bytes).
    static func hasUnit(_ s: String) -> Bool {
        s.trimmingCharacters(in: .whitespaces).last.map { $0.isLetter } ?? false
    }

    /// Nil for what is not a size, or one past 8 EiB (beyond Int64, which would trap).
    static func parse(_ s: String) -> Int64? {
        let t = s.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [(String, Double)] = [("TIB", 0x1p40), ("GIB", 0x1p30), ("MIB", 0x1p20), ("KIB", 0x1p10),
                                         ("TB", 0x1p40), ("GB", 0x1p30), ("MB", 0x1p20), ("KB", 0x1p10),
                                         ("T", 0x1p40), ("G", 0x1p30), ("M", 0x1p20), ("K", 0x1p10), ("B", 1)]
        for (suffix, factor) in units where t.hasSuffix(suffix) {
            guard let n = Double(t.dropLast(suffix.count)), n >= 0, n * factor < 0x1p63 else { return nil }
            return Int64(n * factor)
        }
        guard let n = Int64(t), n >= 0 else { return nil }
        return n
    }

    static func format(_ n: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var v = Double(n), i = 0
        while v >= 1024 && i < units.count - 1 { v /= 1024; i += 1 }
        return i == 0 ? "\(n) B" : String(format: "%.1f %@", v, units[i])
    }
}

import Foundation
