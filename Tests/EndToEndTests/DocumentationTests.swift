import Foundation
import TestSupport
import XCTest

/// What README.md and docs/*.md state, checked against the code (no mount, no server): the
/// README stays a short front door, every relative link resolves, every option `--help` lists
/// is in docs/commands.md with the default `--help` shows, the extended attributes the docs name
/// are the ones the code answers, and the exit statuses table is `ExitStatus`. The code is the
/// truth: nothing here repeats a value, everything is parsed from the sources, the binary's
/// `--help` and the pages. Every failure names the file and the fact that differs.
final class DocumentationTests: XCTestCase {
    private let root = FavFSBinary.packageRoot

    // MARK: (a) README: a front door

    func testReadmeIsShort() throws {
        let readme = try text("README.md")
        let lines = readme.components(separatedBy: "\n")
        // As `wc -l`: the number of newlines.
        let count = readme.filter { $0 == "\n" }.count
        XCTAssertLessThanOrEqual(count, 200, "README.md: \(count) lines (wc -l); at most 200: move details into docs/")
        for (i, line) in lines.enumerated() where line.count > 200 {
            XCTFail("README.md:\(i + 1): \(line.count) characters; at most 200: \(line.prefix(60))…")
        }
        // CI and people run the README's test commands: they must stay there, as commands.
        let commands = codeBlockLines(readme).map { $0.trimmingCharacters(in: .whitespaces) }
        for command in ["make setup", "make test"] {
            XCTAssertTrue(commands.contains { $0 == command || $0.hasPrefix(command + " ") },
                          "README.md: no code block line runs `\(command)`")
        }
    }

    // MARK: (b) links

    func testRelativeLinksResolve() throws {
        var checked = 0
        for file in try markdownFiles() {
            let body = try text(file)
            let dir = root.appendingPathComponent(file).deletingLastPathComponent()
            for target in links(in: body) {
                if target.contains("://") || target.hasPrefix("mailto:") { continue }
                checked += 1
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let path = parts[0], anchor = parts.count > 1 ? parts[1] : ""
                let resolved = path.isEmpty ? root.appendingPathComponent(file)
                    : dir.appendingPathComponent(path.removingPercentEncoding ?? path).standardizedFileURL
                guard FileManager.default.fileExists(atPath: resolved.path) else {
                    XCTFail("\(file): the link (\(target)) points to \(relative(resolved)), which does not exist")
                    continue
                }
                guard !anchor.isEmpty, resolved.pathExtension == "md" else { continue }
                let headings = anchors(of: (try? String(contentsOf: resolved, encoding: .utf8)) ?? "")
                XCTAssertTrue(headings.contains(anchor),
                              "\(file): the link (\(target)) names #\(anchor), which is no heading of \(relative(resolved)) (it has: \(headings.sorted().joined(separator: ", ")))")
            }
        }
        XCTAssertGreaterThan(checked, 10, "found only \(checked) relative links in README.md and docs/*.md: is the link parser broken?")
    }

    /// A path a page names in code quotes (`Sources/…`, `Tests/…`) is there: files move when
    /// the code is reshaped, and a page that points at a file gone misleads its reader.
    func testSourcePathsNamedInDocsExist() throws {
        var checked = 0
        let quoted = try NSRegularExpression(pattern: "`((?:Sources|Tests|CFuse|packaging|bench|scripts)/[^` ]+)`")
        for file in try markdownFiles() {
            let body = try text(file)
            for m in quoted.matches(in: body, range: NSRange(body.startIndex..., in: body)) {
                guard let r = Range(m.range(at: 1), in: body) else { continue }
                // "Sources/FavFSCore/Content/ContentCache*.swift" names a set: a file of its
                // folder must begin so.
                let path = String(body[r])
                checked += 1
                if let star = path.firstIndex(of: "*") {
                    let before = path[..<star], slash = before.lastIndex(of: "/") ?? before.startIndex
                    let folder = root.appendingPathComponent(String(before[..<slash]))
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
                    let start = String(before[before.index(after: slash)...])
                    XCTAssertTrue(names.contains { $0.hasPrefix(start) }, "\(file) names `\(path)`, which matches nothing in the repository")
                } else {
                    XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path),
                                  "\(file) names `\(path)`, which is not in the repository")
                }
            }
        }
        XCTAssertGreaterThan(checked, 10, "found only \(checked) quoted paths in README.md and docs/*.md: is the pattern broken?")
    }

    // MARK: (c) options and defaults

    func testEveryOptionAndDefaultIsInCommandsPage() throws {
        guard FavFSBinary.isAvailable else {
            throw ShellError("the documentation test needs the favfs binary at \(FavFSBinary.path) (set FAVFS_BIN or swift build --product favfs)")
        }
        let page = try text("docs/commands.md")
        let commands: [(args: [String], heading: String)] = [
            (["mount"], "favfs mount "), (["unmount"], "favfs unmount "), (["status"], "favfs status "),
            (["remote", "add"], "favfs remote add "),
        ]
        for (args, heading) in commands {
            let name = "favfs \(args.joined(separator: " "))"
            let result = try TimedProcess.run(FavFSBinary.path, args + ["--help"], timeout: 30)
            XCTAssertEqual(result.status, 0, "\(name) --help: \(result)")
            let options = helpOptions(result.stdout)
            XCTAssertFalse(options.isEmpty, "\(name) --help lists no options: is the help parser broken?\n\(result.stdout)")
            guard let section = section(of: page, headingStartingWith: "`" + heading) else {
                XCTFail("docs/commands.md: no section whose heading starts with `\(heading)…`")
                continue
            }
            for option in options {
                for flag in option.names where flag != "-h" {
                    let place = ["--help", "--version"].contains(flag) ? page : section
                    XCTAssertTrue(mentions(place, flag),
                                  "docs/commands.md: `\(name) --help` lists \(flag), which the page does not name\(place == page ? "" : " in its `\(heading)…` section")")
                }
                guard let shown = option.defaultValue, let long = option.names.first(where: { $0.hasPrefix("--") }) else { continue }
                guard let stated = tableDefault(in: section, option: long) else {
                    XCTFail("docs/commands.md: `\(name) --help` shows \(long) with (default: \(shown)); the `\(heading)…` section has no table row for \(long) stating its default")
                    continue
                }
                XCTAssertTrue(sameDefault(shown: shown, stated: stated),
                              "docs/commands.md: the default of `\(name) \(long)` is '\(stated)'; `--help` (the code) says '\(shown)'")
            }
            // And the other way: an option the page's table lists must exist.
            let known = Set(options.flatMap(\.names))
            for row in tableRows(in: section) {
                guard let first = row.first, let flag = firstFlag(first) else { continue }
                XCTAssertTrue(known.contains(flag), "docs/commands.md: the `\(heading)…` table lists \(flag), which `\(name) --help` does not know")
            }
        }
    }

    // MARK: (c2) remotes

    /// docs/remotes.md's first table has a row for every URL scheme favfs knows, naming each
    /// option its provider takes. Both lists come from the binary's own refusals (an unknown
    /// scheme, an unknown option), which print what it knows.
    func testRemotesTableNamesEverySchemeAndOption() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("favfs-doc-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: home) }
        func favfs(_ args: [String]) throws -> String {
            let r = try Shell.run(FavFSBinary.path, args, environment: ["XDG_CONFIG_HOME": home.path, "HOME": home.path])
            return r.error + r.output
        }
        let refusal = try favfs(["remote", "add", "doc-check", "no-such-scheme://host/"])
        guard let open = refusal.range(of: "(supported: "), let close = refusal.range(of: ")", range: open.upperBound..<refusal.endIndex) else {
            return XCTFail("favfs did not list its schemes: \(refusal)")
        }
        let schemes = refusal[open.upperBound..<close.lowerBound].components(separatedBy: ", ").map { String($0.dropLast(3)) }
        XCTAssertGreaterThan(schemes.count, 8, "schemes: \(schemes)")
        let page = try text("docs/remotes.md")
        let table = page.components(separatedBy: "\n## ")[0].components(separatedBy: "\n").filter { $0.hasPrefix("| ") }
        for scheme in schemes {
            // The URL is the row's second cell (another row may name such a URL as an example).
            guard let row = table.first(where: { $0.components(separatedBy: " | ").dropFirst().first?.contains("`\(scheme)://") ?? false }) else {
                XCTFail("docs/remotes.md: no row of the remotes table names `\(scheme)://`")
                continue
            }
            // file://, dropbox:// and onedrive:// name no host.
            let said = try favfs(["remote", "add", "doc-check", "\(scheme)://\(["file", "dropbox", "onedrive"].contains(scheme) ? "" : "host")/share?zz-doc-check=1"])
            guard let known = said.range(of: "(known: ") else {
                XCTAssertTrue(said.contains("takes no options"), "\(scheme)://: \(said)")
                continue
            }
            let options = said[known.upperBound...].prefix { $0 != ")" }.components(separatedBy: ", ")
            for option in options {
                XCTAssertTrue(row.contains("`\(option)`") || row.contains("`\(option)="), "docs/remotes.md: the `\(scheme)://` row does not name its option `\(option)`")
            }
        }
    }

    // MARK: (d) extended attributes

    func testExtendedAttributeNamesMatchTheCode() throws {
        let bridge = "Sources/FUSEBridge/Bridge+Xattr.swift"
        let source = try text(bridge)
        guard let prefix = firstMatch(#"ownPrefix\s*=\s*"([^"]+)""#, in: source) else {
            return XCTFail("\(bridge): no `ownPrefix = \"…\"`: where does the code name its extended attributes now?")
        }
        // The names the code answers: string literals with that prefix in the bridge and the core.
        var inCode: [String: String] = [:]
        let literal = "\"(" + NSRegularExpression.escapedPattern(for: prefix) + "[A-Za-z0-9_.-]+)\""
        for dir in ["Sources/FUSEBridge", "Sources/FavFSCore"] {
            for file in try swiftFiles(under: dir) {
                for name in allMatches(literal, in: try text(file)) { inCode[name] = file }
            }
        }
        XCTAssertFalse(inCode.isEmpty, "no \"\(prefix)…\" literal in Sources/FUSEBridge or Sources/FavFSCore: is the parser broken?")
        var inDocs: [String: String] = [:]
        let mention = NSRegularExpression.escapedPattern(for: prefix) + "[A-Za-z0-9_]+"
        for file in try markdownFiles() {
            for name in allMatches("(" + mention + ")", in: try text(file)) where inDocs[name] == nil { inDocs[name] = file }
        }
        for (name, file) in inDocs.sorted(by: { $0.key < $1.key }) where inCode[name] == nil {
            XCTFail("\(file) names the extended attribute \(name), which the code does not answer (\(bridge) and its Domain give: \(inCode.keys.sorted().joined(separator: ", ")))")
        }
        for (name, file) in inCode.sorted(by: { $0.key < $1.key }) where inDocs[name] == nil {
            XCTFail("\(file) answers the extended attribute \(name), which no page of README.md or docs/ names")
        }
        let behaviour = try text("docs/behaviour.md")
        for name in inCode.keys.sorted() {
            XCTAssertTrue(behaviour.contains("`\(name)`"), "docs/behaviour.md: its extended attributes do not name `\(name)`, which the code answers")
        }
    }

    // MARK: (e) exit statuses

    func testExitStatusesMatchTheCode() throws {
        let file = "Sources/favfs/ExitStatus.swift"
        let source = try text(file)
        var inCode: [Int: String] = [:]
        for m in groups(#"case\s+(\w+)\s*=\s*(\d+)"#, in: source) { inCode[Int(m[1])!] = m[0] }
        XCTAssertFalse(inCode.isEmpty, "\(file): no `case name = N`: is the parser broken?")
        let page = try text("docs/commands.md")
        guard let table = section(of: page, headingStartingWith: "Exit statuses") else {
            return XCTFail("docs/commands.md: no `## Exit statuses` section")
        }
        let documented = Set(tableRows(in: table).compactMap { $0.first.flatMap { Int($0) } })
        for (code, name) in inCode.sorted(by: { $0.key < $1.key }) where !documented.contains(code) {
            XCTFail("docs/commands.md: the exit statuses table lacks \(code) (`ExitStatus.\(name)` in \(file))")
        }
        for code in documented.sorted() where inCode[code] == nil {
            XCTFail("docs/commands.md: the exit statuses table lists \(code), which \(file) does not define")
        }
        // The man page's hand-written EXIT STATUS says the same.
        let man = try text("packaging/favfs.1.sections")
        if let start = man.range(of: ".Sh EXIT STATUS\n") {
            let rest = man[start.upperBound...]
            let body = rest.range(of: "\n.Sh ").map { rest[..<$0.lowerBound] } ?? rest
            let listed = Set(allMatches(#"(?m)^\.It (\d+)$"#, in: String(body)).compactMap { Int($0) })
            XCTAssertEqual(listed, Set(inCode.keys), "packaging/favfs.1.sections: EXIT STATUS lists \(listed.sorted()); \(file) defines \(inCode.keys.sorted())")
        } else {
            XCTFail("packaging/favfs.1.sections: no .Sh EXIT STATUS (packaging/check-installed.sh needs it)")
        }
    }

    // MARK: reading files

    private func text(_ relative: String) throws -> String {
        let url = root.appendingPathComponent(relative)
        do { return try String(contentsOf: url, encoding: .utf8) } catch { throw ShellError("cannot read \(url.path): \(error)") }
    }

    private func relative(_ url: URL) -> String {
        let base = root.standardizedFileURL.path + "/"
        return url.path.hasPrefix(base) ? String(url.path.dropFirst(base.count)) : url.path
    }

    /// README.md and every docs/*.md, as paths from the package root.
    private func markdownFiles() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    private func swiftFiles(under dir: String) throws -> [String] {
        guard let walk = FileManager.default.enumerator(atPath: root.appendingPathComponent(dir).path) else {
            throw ShellError("cannot list \(dir)")
        }
        return walk.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map { dir + "/" + $0 }
    }

    // MARK: markdown

    /// The lines inside ``` fences.
    private func codeBlockLines(_ markdown: String) -> [String] {
        var inside = false, out: [String] = []
        for line in markdown.components(separatedBy: "\n") {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") { inside.toggle(); continue }
            if inside { out.append(line) }
        }
        return out
    }

    /// The lines outside ``` fences.
    private func proseLines(_ markdown: String) -> [String] {
        var inside = false, out: [String] = []
        for line in markdown.components(separatedBy: "\n") {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") { inside.toggle(); continue }
            if !inside { out.append(line) }
        }
        return out
    }

    /// Link targets `[text](target)` outside code blocks and code spans.
    private func links(in markdown: String) -> [String] {
        proseLines(markdown).flatMap { line -> [String] in
            let plain = line.replacingOccurrences(of: "`[^`]*`", with: "", options: .regularExpression)
            return allMatches(#"\]\(([^)\s]+)\)"#, in: plain)
        }
    }

    /// The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces as
    /// `-`, a repeated one numbered.
    private func anchors(of markdown: String) -> Set<String> {
        var seen: [String: Int] = [:], out = Set<String>()
        for line in proseLines(markdown) {
            guard let m = firstMatch(#"^#{1,6}\s+(.*?)\s*#*\s*$"#, in: line) else { continue }
            var slug = ""
            for c in m.lowercased() {
                if c.isLetter || c.isNumber || c == "-" || c == "_" { slug.append(c) } else if c == " " { slug.append("-") }
            }
            let n = seen[slug, default: 0]
            seen[slug] = n + 1
            out.insert(n == 0 ? slug : "\(slug)-\(n)")
        }
        return out
    }

    /// From the heading (`#`…) whose text starts with `start` to the next heading of that level or above.
    private func section(of page: String, headingStartingWith start: String) -> String? {
        let lines = page.components(separatedBy: "\n")
        guard let i = lines.firstIndex(where: { line in
            guard let m = firstMatch(#"^(#{1,6})\s+(.*)$"#, in: line, group: 2) else { return false }
            return m.hasPrefix(start)
        }) else { return nil }
        let level = lines[i].prefix { $0 == "#" }.count
        var end = lines.count
        for j in (i + 1)..<lines.count {
            let hashes = lines[j].prefix { $0 == "#" }.count
            if hashes > 0 && hashes <= level && lines[j].dropFirst(hashes).first == " " { end = j; break }
        }
        return lines[i..<end].joined(separator: "\n")
    }

    /// The cells of each table row (not the header's separator), `\|` kept as `|`.
    private func tableRows(in markdown: String) -> [[String]] {
        proseLines(markdown).compactMap { line in
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("|"), !t.hasPrefix("|---"), !t.hasPrefix("| ---") else { return nil }
            let cells = t.replacingOccurrences(of: "\\|", with: "\u{1}").split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.replacingOccurrences(of: "\u{1}", with: "|").trimmingCharacters(in: .whitespaces) }
            return Array(cells.dropFirst().dropLast())
        }
    }

    /// The first `--long` option a table cell names, if it starts with one.
    private func firstFlag(_ cell: String) -> String? {
        firstMatch(#"^`(--[a-z0-9][a-z0-9-]*)"#, in: cell)
    }

    /// The default (last) cell of the table row for `option`.
    private func tableDefault(in section: String, option: String) -> String? {
        for row in tableRows(in: section) where row.count >= 2 {
            let names = allMatches(#"`(-{1,2}[a-z0-9][a-z0-9-]*)"#, in: row[0])
            if names.contains(option) { return row.last }
        }
        return nil
    }

    private func mentions(_ text: String, _ flag: String) -> Bool {
        firstMatch("(?<![A-Za-z0-9-])(" + NSRegularExpression.escapedPattern(for: flag) + ")(?![A-Za-z0-9-])", in: text) != nil
    }

    /// `--help` shows `60.0` where the page says `60`; a text default must be in the page's cell.
    private func sameDefault(shown: String, stated: String) -> Bool {
        let s = normalized(shown), d = normalized(stated)
        if let number = Double(s) {
            let first = d.split(separator: " ").first.map(String.init) ?? d
            return Double(first) == number
        }
        return d == s || d.contains(s)
    }

    private func normalized(_ s: String) -> String {
        s.replacingOccurrences(of: "`", with: "").split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
    }

    // MARK: --help

    private struct HelpOption { var names: [String]; var defaultValue: String? }

    /// The OPTIONS of swift-argument-parser's help: `  -q, --quiet   text…` with its text
    /// wrapped onto indented lines, and `(default: …)` somewhere in the text.
    private func helpOptions(_ help: String) -> [HelpOption] {
        var out: [HelpOption] = [], current: (head: String, text: [String])?
        func flush() {
            guard let c = current else { return }
            // `-q, --quiet`, `--cache-size <cache-size>`, `-o, --output <output>`: the names come first.
            let lead = firstMatch(#"^(-[A-Za-z0-9](?:, --[A-Za-z0-9][A-Za-z0-9-]*)?|--[A-Za-z0-9][A-Za-z0-9-]*)"#, in: c.head) ?? ""
            let names = lead.components(separatedBy: ", ").filter { !$0.isEmpty }
            let joined = ([c.head] + c.text).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
            out.append(HelpOption(names: names, defaultValue: firstMatch(#"\(default: ([^)]*)\)"#, in: joined)))
            current = nil
        }
        var inOptions = false
        for line in help.components(separatedBy: "\n") {
            if line.hasPrefix("OPTIONS:") { inOptions = true; continue }
            guard inOptions else { continue }
            if line.trimmingCharacters(in: .whitespaces).isEmpty { flush(); inOptions = false; continue }
            if firstMatch(#"^ {1,4}(-)"#, in: line) != nil {
                flush()
                current = (line.trimmingCharacters(in: .whitespaces), [])
            } else if current != nil {
                current!.text.append(line)
            }
        }
        flush()
        return out
    }

    // MARK: regular expressions

    private func groups(_ pattern: String, in text: String) -> [[String]] {
        guard let re = try? NSRegularExpression(pattern: pattern) else { XCTFail("bad pattern \(pattern)"); return [] }
        let ns = text as NSString
        return re.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { m in
            (1..<m.numberOfRanges).map { m.range(at: $0).location == NSNotFound ? "" : ns.substring(with: m.range(at: $0)) }
        }
    }

    private func allMatches(_ pattern: String, in text: String) -> [String] {
        groups(pattern, in: text).compactMap(\.first)
    }

    private func firstMatch(_ pattern: String, in text: String, group: Int = 1) -> String? {
        groups(pattern, in: text).first.flatMap { $0.count >= group ? $0[group - 1] : nil }
    }
}
