/// A size given as a remote option (`part_size=16M`, `slice_size=8M`).
enum SizeOption {
    /// `1048576`, `64M`, `64MiB`, `5m`, `1G` → bytes (binary units).
    static func parse(_ value: String) -> Int64? {
        var s = value.trimmingCharacters(in: .whitespaces).lowercased()
        for suffix in ["ib", "b"] where s.hasSuffix(suffix) && s.count > suffix.count {
            s.removeLast(suffix.count); break
        }
        var multiplier: Int64 = 1
        switch s.last {
        case "k": multiplier = 1 << 10
        case "m": multiplier = 1 << 20
        case "g": multiplier = 1 << 30
        default: break
        }
        if multiplier != 1 { s.removeLast() }
        guard let n = Int64(s), n >= 0 else { return nil }
        let (r, overflow) = n.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : r
    }
}
