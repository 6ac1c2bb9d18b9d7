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
        do { return try RemotesStore().load().configuration(named: argument, overrides: overrides) }
        catch { throw CLIError("favfs: \(error)", status: .configuration) }
    }

    /// A name or a URL for messages: `nas (dav://me@nas.local/files/)`, or the URL alone.
    static func label(_ c: RemoteConfiguration) -> String {
        c.name.map { "\($0) (\(c.url))" } ?? c.url.description
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
