import ArgumentParser
import Foundation

/// Why argument-parser refused a command line, in favfs's words: the first word that is no
/// command (`favfs mout DIR` → "unknown command 'mout'. Did you mean 'mount'?"), an option the
/// command does not have, a value that is not a number. Only asked once parsing failed, so a
/// good command line never pays for it; nil leaves the parser's own message.
enum CommandLineDiagnosis {
    /// The commands and their arguments, as `favfs --experimental-dump-help` describes them.
    struct Command: Decodable {
        var commandName: String
        var defaultSubcommand: String?
        var subcommands: [Command]?
        var arguments: [Argument]?

        struct Argument: Decodable {
            var kind: String
            var names: [Name]?
            var shouldDisplay: Bool?
            var parsingStrategy: String?
        }
        struct Name: Decodable { var kind: String; var name: String }

        var hasPositionals: Bool { arguments?.contains { $0.kind == "positional" } ?? false }
        func subcommand(_ name: String) -> Command? { subcommands?.first { $0.commandName == name } }
    }
    private struct Dump: Decodable { var command: Command }

    /// What an option's value must be when it must be a number, nil for other options.
    static func expectedNumber(for option: String, value: String) -> String? {
        switch option {
        case "timeout", "dir-cache-time", "poll-interval", "attr-timeout":
            return Double(value)?.isFinite == true ? nil : "a number of seconds ≥ 0"
        case "interval":
            return Double(value)?.isFinite == true ? nil : "a number of seconds > 0"
        case "uid", "gid":
            return UInt32(value) != nil ? nil : "a \(option == "uid" ? "user" : "group") id (a number from 0 to 4294967295)"
        default:
            return nil
        }
    }

    static func diagnose(_ arguments: [String]) -> CLIError? {
        guard let data = FavFS._dumpHelp().data(using: .utf8),
              let root = try? JSONDecoder().decode(Dump.self, from: data).command else { return nil }
        return diagnose(arguments, root: root)
    }

    static func diagnose(_ arguments: [String], root: Command) -> CLIError? {
        // Shell completion calls back with `---completion …`: the parser's business alone.
        if arguments.contains(where: { $0.hasPrefix("---") }) { return nil }
        var command = root, path = ["favfs"], i = 0
        // The commands whose options apply: the last one named, and its default subcommand.
        var optionSources = [root]
        while i < arguments.count, let subcommands = command.subcommands, !subcommands.isEmpty {
            let word = arguments[i]
            let fallback = command.defaultSubcommand.flatMap { command.subcommand($0) }
            if word.hasPrefix("-") {
                if let fallback { optionSources.append(fallback) }
                break
            }
            if word == "help" { return nil }
            if let next = command.subcommand(word) {
                command = next
                path.append(word)
                optionSources = [next]
                i += 1
                continue
            }
            // The default subcommand may take this word as its operand.
            if let fallback, fallback.hasPositionals {
                optionSources.append(fallback)
                break
            }
            let names = subcommands.map(\.commandName)
            let hint = Suggestions.didYouMean(word, among: names, aliases: Suggestions.commandAliases)
            let whose = path.count == 1 ? "" : " after '\(path.joined(separator: " "))'"
            let usage = "see '\(path.joined(separator: " ")) --help'"
            return CLIError(hint.isEmpty
                            ? "favfs: unknown command '\(word)'\(whose) (the commands: \(names.filter { $0 != "help" }.joined(separator: ", ")); \(usage))"
                            : "favfs: unknown command '\(word)'\(whose). \(hint)",
                            status: .usage)
        }
        return checkOptions(Array(arguments[i...]), of: optionSources, path: path.joined(separator: " "))
    }

    private static func checkOptions(_ arguments: [String], of commands: [Command], path: String) -> CLIError? {
        var long: [String: Command.Argument] = [:], short: [Character: Command.Argument] = [:]
        for argument in commands.flatMap({ $0.arguments ?? [] }) {
            for name in argument.names ?? [] {
                if name.kind == "short", let c = name.name.first { short[c] = argument } else { long[name.name] = argument }
            }
        }
        // What argument-parser adds to every command (and the root) without listing it everywhere.
        let builtin = ["help", "version", "generate-completion-script", "experimental-dump-help"]
        let visible = Set(long.filter { $0.value.shouldDisplay != false }.keys.map { "--" + $0 } + ["--help"])
        var rest = arguments[...]
        while let word = rest.popFirst() {
            if word == "--" { break }
            guard word.hasPrefix("-"), word.count > 1, Double(word) == nil else { continue }
            if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                guard let argument = long[name] else {
                    if builtin.contains(name) { continue }
                    let hint = Suggestions.didYouMean("--" + name, among: visible.sorted())
                    return CLIError(hint.isEmpty ? "favfs: unknown option '--\(name)' for '\(path)' (see '\(path) --help')"
                                                 : "favfs: unknown option '--\(name)'. \(hint)", status: .usage)
                }
                guard argument.kind == "option" else { continue }
                let value: String?
                if let eq = body.firstIndex(of: "=") { value = String(body[body.index(after: eq)...]) } else { value = rest.first }
                if let value, let expected = expectedNumber(for: name, value: value) {
                    return CLIError("favfs: --\(name) '\(value)': give \(expected)", status: .usage)
                }
                if !body.contains("="), argument.parsingStrategy == "unconditional" || !(rest.first?.hasPrefix("-") ?? true) { _ = rest.popFirst() }
            } else {
                // -q, -o FILE, -qf: each letter a short name; an option takes the rest, or the next word.
                for (offset, letter) in word.dropFirst().enumerated() {
                    guard let argument = short[letter] else {
                        if letter == "h" { continue }
                        return CLIError("favfs: unknown option '-\(letter)' for '\(path)' (see '\(path) --help')", status: .usage)
                    }
                    if argument.kind == "option" {
                        if offset == word.count - 2 { _ = rest.popFirst() }
                        break
                    }
                }
            }
        }
        return nil
    }
}
