/// Decoding of the HTML character references directory index pages use in `href` values:
/// `&amp; &lt; &gt; &quot; &#39; &apos; &nbsp;`, decimal `&#NNN;` and hex `&#xHH;`.
///
/// Apache writes `href="a&amp;b"` for a file named `a&b` (the `&` is escaped for HTML, not for
/// the URL); the href must be entity-decoded before it is percent-decoded. An unknown or broken
/// reference is kept verbatim, as browsers do.
enum HTMLEntities {
    private static let named: [Substring: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}",
    ]

    static func decode(_ s: Substring) -> String {
        guard s.contains("&") else { return String(s) }
        var out = ""
        out.reserveCapacity(s.utf8.count)
        var i = s.startIndex
        while i < s.endIndex {
            let c = s[i]
            guard c == "&", let semi = s[i...].prefix(12).firstIndex(of: ";") else {
                out.append(c)
                i = s.index(after: i)
                continue
            }
            let body = s[s.index(after: i)..<semi]
            if let replacement = reference(body) {
                out += replacement
                i = s.index(after: semi)
            } else {
                out.append(c)
                i = s.index(after: i)
            }
        }
        return out
    }

    /// `amp` → "&", `#39` → "'", `#x263A` → "☺"; nil when not a reference.
    private static func reference(_ body: Substring) -> String? {
        if let named = named[body] { return named }
        guard body.first == "#" else { return nil }
        let digits = body.dropFirst()
        let value: UInt32?
        if digits.first == "x" || digits.first == "X" {
            value = UInt32(digits.dropFirst(), radix: 16)
        } else {
            value = UInt32(digits, radix: 10)
        }
        guard let value, value != 0, let scalar = Unicode.Scalar(value) else { return nil }
        return String(Character(scalar))
    }
}
