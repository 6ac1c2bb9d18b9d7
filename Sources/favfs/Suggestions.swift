import Foundation

/// "Did you mean …?" for a mistyped word: a command, an option, a remote option's key.
enum Suggestions {
    /// Common names of a command that favfs spells otherwise.
    static let commandAliases: [String: String] = [
        "rm": "remove", "del": "remove", "delete": "remove", "ls": "list", "umount": "unmount", "new": "add", "create": "add",
    ]

    /// The candidates closest to `word`: an alias's target first, then the ones at the smallest
    /// Damerau–Levenshtein distance (at most 1 for words of up to 3 letters, 2 beyond), then the
    /// ones `word` is the start of. Empty when nothing is close.
    static func closest(to word: String, among candidates: [String], aliases: [String: String] = [:]) -> [String] {
        let lower = word.lowercased()
        if let target = aliases[lower], candidates.contains(target) { return [target] }
        let limit = lower.count <= 3 ? 1 : 2
        var best: [String] = [], bestDistance = Int.max
        for candidate in candidates where candidate.lowercased() != lower {
            let d = distance(lower, candidate.lowercased())
            guard d <= limit else { continue }
            if d < bestDistance { best = [candidate]; bestDistance = d } else if d == bestDistance { best.append(candidate) }
        }
        if !best.isEmpty { return best }
        if lower.count >= 2 {
            let prefixed = candidates.filter { $0.lowercased().hasPrefix(lower) }
            if prefixed.count == 1 { return prefixed }
        }
        return []
    }

    /// " Did you mean 'a'?" / " Did you mean 'a' or 'b'?", or "" when nothing is close.
    static func didYouMean(_ word: String, among candidates: [String], aliases: [String: String] = [:], capitalized: Bool = true) -> String {
        let found = closest(to: word, among: candidates, aliases: aliases)
        guard !found.isEmpty else { return "" }
        let quoted = found.prefix(3).map { "'\($0)'" }
        let list = quoted.count == 1 ? quoted[0] : quoted.dropLast().joined(separator: ", ") + " or " + quoted.last!
        return (capitalized ? "Did" : "did") + " you mean \(list)?"
    }

    /// The optimal string alignment distance (Damerau–Levenshtein with adjacent transpositions):
    /// insertions, deletions, substitutions and swaps of two neighbours cost 1 each.
    static func distance(_ a: String, _ b: String) -> Int {
        let s = Array(a), t = Array(b)
        if s.isEmpty { return t.count }
        if t.isEmpty { return s.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: t.count + 1), count: s.count + 1)
        for i in 0...s.count { d[i][0] = i }
        for j in 0...t.count { d[0][j] = j }
        for i in 1...s.count {
            for j in 1...t.count {
                let cost = s[i - 1] == t[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[s.count][t.count]
    }
}

/// "1 file", "2 files": a count and its noun, singular or plural.
enum Plural {
    static func count(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) \(n == 1 ? singular : plural ?? singular + "s")"
    }
}

/// A mistyped remote URL given where a URL or a remote's name goes (`dav//host/`, `http:/host`,
/// `sftp:host`): the URL it probably meant, with the scheme's separator fixed.
enum URLTypo {
    static func correction(of argument: String, schemes: [String]) -> String? {
        guard !argument.contains("://") else { return nil }
        let lower = argument.lowercased()
        // Longest scheme first: "davs" before "dav", "https" before "http".
        for scheme in schemes.sorted(by: { $0.count > $1.count }) where lower.hasPrefix(scheme) {
            var rest = Substring(argument.dropFirst(scheme.count))
            if rest.hasPrefix(":") {
                rest = rest.dropFirst()
                while rest.hasPrefix("/") { rest = rest.dropFirst() }
            } else if rest.hasPrefix("//") {
                rest = rest.dropFirst(2)
            } else {
                continue
            }
            // file:/srv/data meant file:///srv/data.
            if scheme == "file" { return "file:///" + rest }
            guard !rest.isEmpty else { return nil }
            return "\(scheme)://\(rest)"
        }
        return nil
    }
}
