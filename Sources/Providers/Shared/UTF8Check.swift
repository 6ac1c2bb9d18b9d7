import Foundation

/// Whether bytes from a server are valid UTF-8, checked before Foundation's XMLParser sees
/// them: on Linux it traps (ending the whole daemon) on an element or attribute name that is not
/// valid UTF-8, which a broken or hostile server can send. Such a reply is refused instead.
enum UTF8Check {
    static func isValid(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in isValid(raw, carry: []) == .valid }
    }

    /// Checks a body chunk by chunk, as it arrives: a sequence cut by the end of one chunk is
    /// completed by the next.
    struct Incremental {
        private var carry: [UInt8] = []
        private var failed = false

        /// False once anything fed so far is not valid UTF-8.
        mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
            guard !failed else { return false }
            switch UTF8Check.isValid(bytes, carry: carry) {
            case .valid: carry = []
            case .incomplete(let tail): carry = tail
            case .invalid: failed = true
            }
            return !failed
        }

        /// Whether everything fed was valid and no sequence was left cut off at the end.
        var isComplete: Bool { !failed && carry.isEmpty }
    }

    private enum Result: Equatable { case valid, incomplete([UInt8]), invalid }

    /// Checks `carry + bytes`; a sequence cut by the end of the chunk is handed back to be
    /// completed by the next one.
    private static func isValid(_ bytes: UnsafeRawBufferPointer, carry: [UInt8]) -> Result {
        let all = carry + bytes
        var i = 0
        while i < all.count {
            let b = all[i]
            if b < 0x80 { i += 1; continue }
            let length: Int, low: UInt8, high: UInt8
            switch b {
            case 0xC2...0xDF: length = 2; low = 0x80; high = 0xBF
            case 0xE0: length = 3; low = 0xA0; high = 0xBF         // no overlongs
            case 0xE1...0xEC, 0xEE...0xEF: length = 3; low = 0x80; high = 0xBF
            case 0xED: length = 3; low = 0x80; high = 0x9F         // no surrogates
            case 0xF0: length = 4; low = 0x90; high = 0xBF
            case 0xF1...0xF3: length = 4; low = 0x80; high = 0xBF
            case 0xF4: length = 4; low = 0x80; high = 0x8F         // up to U+10FFFF
            default: return .invalid
            }
            if i + length > all.count {
                // Cut off: valid so far? Then the next chunk decides.
                for j in (i + 1)..<all.count where !(j == i + 1 ? (low...high).contains(all[j]) : (0x80...0xBF).contains(all[j])) {
                    return .invalid
                }
                return .incomplete(Array(all[i...]))
            }
            guard (low...high).contains(all[i + 1]) else { return .invalid }
            for j in (i + 2)..<(i + length) where !(0x80...0xBF).contains(all[j]) { return .invalid }
            i += length
        }
        return .valid
    }
}
