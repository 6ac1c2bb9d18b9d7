import Foundation

/// The TOML subset of the remotes file, read and written here (no TOML package):
///
///     # comments and blank lines anywhere
///     [remotes.nas]                 # a remote; a name with a dot is quoted: [remotes."nas.home"]
///     url = "dav://me@nas.local/files/"
///     default = true
///     secret = "p\u00e4ss \"word\""
///
///     [remotes.nas.options]
///     region = "eu-west-1"
///     "odd key" = 'a literal string'
///
/// Values are basic strings (escapes `\" \\ \n \t \r \b \f \uXXXX \UXXXXXXXX`), literal strings
/// (`'…'`, no escapes) and `true`/`false`. Not supported (a clear error, never a guess): multi-line
/// strings, numbers, arrays, inline tables, dotted keys in a key/value line.
public enum RemotesTOML {
    /// What is wrong and on which line (1-based).
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let line: Int
        public let problem: String
        public var description: String { "line \(line): \(problem)" }
    }

    enum Value: Equatable {
        case string(String)
        case bool(Bool)
    }

    // MARK: Reading

    /// The remotes in the order their tables first appear.
    public static func parse(_ text: String) throws(ParseError) -> [StoredRemote] {
        var remotes: [StoredRemote] = []
        var index: [String: Int] = [:]
        var headerLine: [String: Int] = [:]      // where each remote was introduced, for "has no url"
        var seenTables = Set<[String]>()
        enum Table { case top, remotesRoot, remote(String), options(String) }
        var table = Table.top
        var seenKeys = Set<String>()

        func remoteIndex(_ name: String, line: Int) -> Int {
            if let i = index[name] { return i }
            remotes.append(StoredRemote(name: name, url: ""))
            index[name] = remotes.count - 1
            headerLine[name] = line
            return remotes.count - 1
        }

        var lineNumber = 0
        // "\r\n" is one Character in Swift: split on both.
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            var line = Substring(rawLine)
            if line.hasSuffix("\r") { line = line.dropLast() }
            var s = LineScanner(line, number: lineNumber)
            s.skipSpace()
            if s.atEndOrComment { continue }

            if s.peek == "[" {
                s.advance()
                if s.peek == "[" { throw s.error("arrays of tables ([[…]]) are not supported") }
                let path = try s.dottedKey()
                s.skipSpace()
                guard s.peek == "]" else { throw s.error("expected ']' to close the table name") }
                s.advance()
                try s.expectEndOfLine()
                guard !seenTables.contains(path) else {
                    throw s.error("table [\(path.map(keyText).joined(separator: "."))] appears twice")
                }
                seenTables.insert(path)
                seenKeys = []
                switch path.count {
                case 1 where path[0] == "remotes":
                    table = .remotesRoot
                case 2 where path[0] == "remotes":
                    try validName(path[1], s)
                    _ = remoteIndex(path[1], line: lineNumber)
                    table = .remote(path[1])
                case 3 where path[0] == "remotes" && path[2] == "options":
                    try validName(path[1], s)
                    _ = remoteIndex(path[1], line: lineNumber)
                    table = .options(path[1])
                default:
                    throw s.error("unknown table [\(path.map(keyText).joined(separator: "."))] (expected [remotes.NAME] or [remotes.NAME.options])")
                }
                continue
            }

            let key = try s.key()
            s.skipSpace()
            if s.peek == "." { throw s.error("dotted keys are not supported: use a [remotes.NAME.options] table") }
            guard s.peek == "=" else { throw s.error("expected '=' after the key '\(key)'") }
            s.advance()
            s.skipSpace()
            let value = try s.value()
            try s.expectEndOfLine()
            guard !seenKeys.contains(key) else { throw s.error("the key '\(key)' appears twice in this table") }
            seenKeys.insert(key)

            switch table {
            case .top, .remotesRoot:
                throw s.error("'\(key)' is outside a [remotes.NAME] table")
            case .remote(let name):
                let i = index[name]!
                switch (key, value) {
                case ("url", .string(let v)): remotes[i].url = v
                case ("secret", .string(let v)): remotes[i].secret = v
                case ("default", .bool(let v)):
                    if v, let other = remotes.first(where: { $0.isDefault && $0.name != name }) {
                        throw s.error("'\(name)' and '\(other.name)' are both marked default")
                    }
                    remotes[i].isDefault = v
                case ("url", _), ("secret", _): throw s.error("'\(key)' must be a string in quotes")
                case ("default", _): throw s.error("'default' must be true or false")
                default: throw s.error("unknown key '\(key)' in [remotes.\(keyText(name))] (known: url, default, secret; options go in [remotes.\(keyText(name)).options])")
                }
            case .options(let name):
                guard case .string(let v) = value else {
                    throw s.error("the option '\(key)' must be a string in quotes (e.g. \(keyText(key)) = \"true\")")
                }
                remotes[index[name]!].options[key] = v
            }
        }

        for r in remotes where r.url.isEmpty {
            throw ParseError(line: headerLine[r.name] ?? 1, problem: "the remote '\(r.name)' has no url")
        }
        return remotes
    }

    private static func validName(_ name: String, _ s: LineScanner) throws(ParseError) {
        guard StoredRemote.isValidName(name) else {
            throw s.error("'\(name)' is not a valid remote name (letters, digits, '.', '_', '-')")
        }
    }

    // MARK: Writing

    /// The file's text: a header comment, then one table (and options table) per remote.
    public static func serialize(_ remotes: [StoredRemote]) -> String {
        var out = """
            # favfs remotes, written by `favfs remote add|remove|default` (comments are not kept).
            # It holds secrets: keep it private (chmod 600); favfs refuses it otherwise.

            """
        for r in remotes {
            out += "\n[remotes.\(keyText(r.name))]\n"
            out += "url = \(quoted(r.url))\n"
            if r.isDefault { out += "default = true\n" }
            if let secret = r.secret { out += "secret = \(quoted(secret))\n" }
            if !r.options.isEmpty {
                out += "\n[remotes.\(keyText(r.name)).options]\n"
                for k in r.options.keys.sorted() { out += "\(keyText(k)) = \(quoted(r.options[k]!))\n" }
            }
        }
        return out
    }

    /// A key as written: bare when TOML allows it (`A-Za-z0-9_-`), else a quoted string.
    static func keyText(_ key: String) -> String {
        let bare = !key.isEmpty && key.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
        }
        return bare ? key : quoted(key)
    }

    /// A basic string: quotes, backslashes and control characters escaped; other text as is (UTF-8).
    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where u.value < 0x20 || u.value == 0x7f:
                out += String(format: "\\u%04X", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}

/// Reads one line of the file, scalar by scalar.
struct LineScanner {
    private let chars: [Unicode.Scalar]
    private var i = 0
    let number: Int

    init(_ line: Substring, number: Int) {
        chars = Array(line.unicodeScalars)
        self.number = number
    }

    var peek: Unicode.Scalar? { i < chars.count ? chars[i] : nil }
    mutating func advance() { i += 1 }
    var atEndOrComment: Bool { peek == nil || peek == "#" }

    func error(_ problem: String) -> RemotesTOML.ParseError { .init(line: number, problem: problem) }

    mutating func skipSpace() { while peek == " " || peek == "\t" { i += 1 } }

    /// Only spaces and a comment may follow.
    mutating func expectEndOfLine() throws(RemotesTOML.ParseError) {
        skipSpace()
        guard atEndOrComment else { throw error("unexpected '\(String(String.UnicodeScalarView(chars[i...])))' (a comment starts with '#')") }
    }

    /// `a.b."c.d"` (spaces around the dots allowed).
    mutating func dottedKey() throws(RemotesTOML.ParseError) -> [String] {
        var parts: [String] = []
        while true {
            skipSpace()
            parts.append(try key())
            skipSpace()
            guard peek == "." else { return parts }
            advance()
        }
    }

    /// A bare key (`A-Za-z0-9_-`) or a quoted one.
    mutating func key() throws(RemotesTOML.ParseError) -> String {
        switch peek {
        case "\"": return try basicString()
        case "'": return try literalString()
        default:
            var k = String.UnicodeScalarView()
            while let c = peek, ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "-" {
                k.append(c); advance()
            }
            guard !k.isEmpty else {
                throw error(peek.map { "unexpected '\($0)': expected a key (letters, digits, '_', '-', or a quoted key)" } ?? "expected a key")
            }
            return String(k)
        }
    }

    mutating func value() throws(RemotesTOML.ParseError) -> RemotesTOML.Value {
        switch peek {
        case "\"": return .string(try basicString())
        case "'": return .string(try literalString())
        case nil: throw error("expected a value after '='")
        default:
            var word = String.UnicodeScalarView()
            while let c = peek, c != " ", c != "\t", c != "#" { word.append(c); advance() }
            switch String(word) {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: throw error("unsupported value '\(String(word))': use a string in double quotes or true/false")
            }
        }
    }

    /// `"…"` with escapes; must end on this line.
    mutating func basicString() throws(RemotesTOML.ParseError) -> String {
        advance() // opening quote
        if peek == "\"" && i + 1 < chars.count && chars[i + 1] == "\"" {
            throw error("multi-line strings (\"\"\") are not supported: write \\n in a one-line string")
        }
        var out = String.UnicodeScalarView()
        while let c = peek {
            advance()
            switch c {
            case "\"": return String(out)
            case "\\":
                guard let e = peek else { throw error("a string ends with a lone backslash") }
                advance()
                switch e {
                case "\"": out.append("\"")
                case "\\": out.append("\\")
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "r": out.append("\r")
                case "b": out.append("\u{08}")
                case "f": out.append("\u{0C}")
                case "u": out.append(try hexScalar(digits: 4))
                case "U": out.append(try hexScalar(digits: 8))
                default: throw error("unknown escape '\\\(e)' in a string (known: \\\" \\\\ \\n \\t \\r \\b \\f \\uXXXX \\UXXXXXXXX)")
                }
            case _ where (c.value < 0x20 && c != "\t") || c.value == 0x7f:
                throw error(String(format: "a control character (U+%04X) in a string: write it as \\u%04X", c.value, c.value))
            default: out.append(c)
            }
        }
        throw error("a string is not closed (missing '\"' on this line)")
    }

    /// `'…'`: no escapes; must end on this line.
    mutating func literalString() throws(RemotesTOML.ParseError) -> String {
        advance()
        var out = String.UnicodeScalarView()
        while let c = peek {
            advance()
            if c == "'" { return String(out) }
            out.append(c)
        }
        throw error("a string is not closed (missing \"'\" on this line)")
    }

    private mutating func hexScalar(digits: Int) throws(RemotesTOML.ParseError) -> Unicode.Scalar {
        guard i + digits <= chars.count else { throw error("\\u needs \(digits) hex digits") }
        let hex = String(String.UnicodeScalarView(chars[i..<(i + digits)]))
        guard hex.allSatisfy(\.isHexDigit), let v = UInt32(hex, radix: 16) else {
            throw error("'\(hex)' is not \(digits) hex digits")
        }
        guard let u = Unicode.Scalar(v) else { throw error("\\u\(hex) is not a Unicode scalar value") }
        i += digits
        return u
    }
}
