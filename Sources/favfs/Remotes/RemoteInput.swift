import Foundation
import Providers

/// `--option k=v` values from the command line.
enum OptionPairs {
    static func parse(_ pairs: [String]) throws -> [String: String] {
        var out: [String: String] = [:]
        for p in pairs {
            guard let eq = p.firstIndex(of: "="), eq != p.startIndex else {
                throw CLIError("favfs: --option '\(p)' is not KEY=VALUE (e.g. --option region=eu-west-1)", status: .usage)
            }
            let key = String(p[..<eq])
            guard !key.contains(where: \.isWhitespace) else { throw CLIError("favfs: --option '\(p)': the key has spaces", status: .usage) }
            out[key] = String(p[p.index(after: eq)...])
        }
        return out
    }
}

/// The secret from standard input's first line: never from argv (it would show in `ps` and shell
/// history). On a terminal the typing is not echoed.
enum SecretInput {
    static func read(prompt: String) throws -> String {
        let tty = isatty(STDIN_FILENO) == 1
        var saved = termios()
        if tty {
            FileHandle.standardError.write(Data(prompt.utf8))
            tcgetattr(STDIN_FILENO, &saved)
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        }
        let line = readLine(strippingNewline: true)
        if tty {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        guard let line, !line.isEmpty else {
            throw CLIError("favfs: --password-stdin: no secret on standard input (its first line is empty)", status: .usage)
        }
        return line
    }
}

/// `--remote NAME|URL` (or none: the default remote) made into a configuration.
enum RemoteSelection {
    /// An argument with "://" is a URL (the remotes file is not read); otherwise a remote's name.
    static func isURL(_ argument: String) -> Bool { argument.contains("://") }

    static func resolve(_ argument: String?, overrides: [String: String]) throws -> RemoteConfiguration {
        if let argument, isURL(argument) {
            do { return RemoteConfiguration(url: try RemoteURL(argument), options: overrides) }
            catch { throw CLIError("favfs: \(error)", status: .dataError) }
        }
        let file = try RemotesStore().loadOrExit()
        do { return try file.configuration(named: argument, overrides: overrides) } catch {
            // A remote's name has no '/' or ':': such an argument is a URL with a typo.
            if let argument, file[argument] == nil, let hint = notAURL(argument) {
                throw CLIError("favfs: \(error); \(hint)", status: .dataError)
            }
            throw CLIError("favfs: \(error)", status: .configuration)
        }
    }

    /// What to say of an argument that is no remote's name but looks like a mistyped URL
    /// (`dav//host/`, `http:/host`, `sftp:host`, `nas/files`), nil when it looks like a name.
    static func notAURL(_ argument: String) -> String? {
        if let fixed = URLTypo.correction(of: argument, schemes: Array(RemoteURL.schemes.keys)) {
            return "it is not a URL either: did you mean '\(fixed)'?"
        }
        guard argument.contains("/") || argument.contains(":") else { return nil }
        let schemes = RemoteURL.schemes.keys.sorted().map { "\($0)://" }.joined(separator: ", ")
        return "it is not a URL either: a URL starts with its scheme and '://' (\(schemes))"
    }

    /// A name or a URL for messages: `nas (dav://me@nas.local/files/)`, or the URL alone.
    static func label(_ c: RemoteConfiguration) -> String {
        c.name.map { "\($0) (\(c.url))" } ?? c.url.description
    }
}

/// Refuses a provider option the remote's kind does not know, with the key it probably meant,
/// before anything is stored or contacted (exit 65, as the provider's own refusal).
enum RemoteOptionCheck {
    static func validate<Keys: Sequence<String>>(_ keys: Keys, for url: RemoteURL) throws {
        let known = url.kind.optionNames.sorted()
        for key in Set(keys).sorted() where !known.contains(key) {
            let hint = Suggestions.didYouMean(key, among: known, capitalized: false)
            let list = known.isEmpty ? "it takes no options" : "known: " + known.joined(separator: ", ")
            throw CLIError("favfs: unknown option '\(key)' for \(url.kind.remoteNoun)" + (hint.isEmpty ? " (\(list))" : "; \(hint) (\(list))"),
                           status: .dataError)
        }
    }

    /// Every option of a resolved configuration (the URL's query, stored, command line).
    static func validate(_ configuration: RemoteConfiguration) throws {
        try validate(configuration.options.keys, for: configuration.url)
    }
}

/// Loads or updates the remotes file, turning its errors into CLI errors.
extension RemotesStore {
    func loadOrExit() throws -> RemotesFile {
        do { return try load() } catch { throw CLIError("favfs: \(error)", status: .configuration) }
    }

    func updateOrExit<T>(_ body: (inout RemotesFile) throws(RemotesError) -> T) throws -> T {
        do { return try update(body) } catch { throw CLIError("favfs: \(error)", status: .configuration) }
    }
}

/// What shell completion offers for a remote's name: the names in the remotes file (nothing
/// when it cannot be read; completion never prints an error).
enum RemoteCompletion {
    static func names() -> [String] {
        ((try? RemotesStore().load())?.remotes.map(\.name) ?? []).sorted()
    }
}
