import Foundation

/// A point in time as POSIX keeps it: whole seconds since 1970 and nanoseconds (0...999,999,999).
/// Times set with `utimensat` travel as this, never through a `Double` (which holds a 2020 date
/// to about 240 ns only); protocols with less precision truncate, as docs/remotes.md says per provider.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var seconds: Int64
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        // Normalised so equal instants compare equal.
        let extra = Int64(nanoseconds) / 1_000_000_000
        var ns = Int64(nanoseconds) % 1_000_000_000
        var s = seconds &+ extra
        if ns < 0 { ns += 1_000_000_000; s = s &- 1 }
        self.seconds = s
        self.nanoseconds = Int32(ns)
    }

    /// From seconds as a `Double` (server dates, which have at most microseconds); non-finite
    /// or absurd values are clamped to what `time_t` and programs can show.
    public init(_ timeInterval: Double) {
        guard timeInterval.isFinite else { self.init(seconds: 0); return }
        let limit = 253_402_300_799.0 // 9999-12-31T23:59:59Z
        let t = min(max(timeInterval, -limit), limit)
        let whole = t.rounded(.down)
        self.init(seconds: Int64(whole), nanoseconds: Int32(min(999_999_999, ((t - whole) * 1e9).rounded())))
    }

    /// Seconds since 1970 as a `Double` (for comparisons and protocols that take seconds).
    public var timeInterval: Double { Double(seconds) + Double(nanoseconds) / 1e9 }

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }

    public var description: String {
        let ns = String(nanoseconds)
        return "\(seconds).\(String(repeating: "0", count: 9 - ns.count))\(ns)"
    }
}

extension Timestamp: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    public init(integerLiteral value: Int64) { self.init(seconds: value) }
    public init(floatLiteral value: Double) { self.init(value) }
}
