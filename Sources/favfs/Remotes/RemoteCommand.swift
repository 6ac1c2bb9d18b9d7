import ArgumentParser
import Foundation
import Providers

/// `favfs remote add|list|remove|default|test`: named remotes in the remotes file.
struct RemoteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remote",
        abstract: "Manage named remotes: a URL, its options and its secret, kept in one private file.",
        discussion: """
            Remotes live in $XDG_CONFIG_HOME/favfs/remotes.toml (default ~/.config/favfs/remotes.toml), mode 0600; favfs refuses the file if group or others can read it. Secrets are read from standard input (--password-stdin), never from the command line, and are never printed.

            Examples:
              echo "$PASS" | favfs remote add nas dav://me@nas.local:8080/files/ \\
                  --password-stdin --default
              favfs remote add data s3://bucket/prefix --option region=eu-west-1 \\
                  --password-stdin < ~/.s3secret
              favfs remote add ref file:///srv/data
              favfs remote list
              favfs remote test nas
              favfs remote default ref
              favfs remote remove data
              favfs mount ~/Remote --remote nas
              favfs mount ~/Remote               # the default remote
            """,
        subcommands: [RemoteAddCommand.self, RemoteListCommand.self, RemoteRemoveCommand.self,
                      RemoteDefaultCommand.self, RemoteTestCommand.self],
        defaultSubcommand: RemoteListCommand.self
    )
}

struct RemoteAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a named remote (its URL, options and secret).",
        discussion: """
            NAME is letters, digits, '.', '_' and '-'. The URL is checked but not contacted (use 'favfs remote test NAME'). It must not hold a password: give that on standard input with --password-stdin (on a terminal it is asked for without echo). --force replaces an existing remote of that name entirely (URL, options, secret); it stays the default if it was.

            A dropbox:// remote without --password-stdin signs in: the browser opens Dropbox's page (with a desktop: DISPLAY or WAYLAND_DISPLAY and xdg-open), or the address is printed and the code it shows is read from standard input. An onedrive:// remote signs in to Microsoft the same way with a desktop; without one, favfs prints Microsoft's page and a code to enter there (the device code flow) and waits. The refresh token it gives is stored as the remote's secret. The wait is 5 minutes at most.

            Examples:
              echo "$PASS" | favfs remote add nas dav://me@nas.local:8080/files/ \\
                  --password-stdin --default
              favfs remote add cloud davs://me@dav.example.com/remote.php/dav/files/me/ \\
                  --password-stdin < ~/.secret
              favfs remote add data s3://bucket/prefix --option region=eu-west-1 \\
                  --option endpoint=http://127.0.0.1:9000 --password-stdin
              favfs remote add ref file:///srv/data
              favfs remote add box dropbox:///Work --option client_id=APPKEY   # signs in
              favfs remote add od onedrive:///Documents --option client_id=APPID   # signs in to Microsoft
              echo "$NEWPASS" | favfs remote add nas dav://me@nas.local:8080/files/ \\
                  --password-stdin --force      # a new secret
            """)

    @Argument(help: "The remote's name ([A-Za-z0-9._-]+).")
    var name: String

    @Argument(help: "Its URL: dav://[user@]host[:port]/path, davs://…, s3://bucket/prefix, sftp://user@host/path, smb://user@host/share/path, dropbox:///path, onedrive:///path, ftp://…, ftps://…, http(s)://…, favart://host, file:///path.")
    var url: String

    @Option(name: .customLong("option"), help: ArgumentHelp("A provider option, KEY=VALUE (repeatable).", valueName: "key=value"))
    var options: [String] = []

    @Flag(help: "Read the password or secret key from the first line of standard input.")
    var passwordStdin = false

    @Option(help: ArgumentHelp("Sign-in with a browser: the port of http://127.0.0.1:PORT/ (OneDrive: http://localhost:PORT/) the browser comes back to (the redirect URI registered for the app); default: a free port.", valueName: "port"))
    var redirectPort: Int?

    @Flag(name: .customLong("default"), help: "Make it the default remote (used by 'favfs mount' without --remote).")
    var makeDefault = false

    @Flag(help: "Replace an existing remote of that name.")
    var force = false

    func run() async throws {
        do { try await add() } catch let e as CLIError { e.exit() }
    }

    private func add() async throws {
        guard StoredRemote.isValidName(name) else {
            throw CLIError("favfs: '\(name)' is not a valid remote name: use letters, digits, '.', '_' and '-'", status: .usage)
        }
        let parsed: RemoteURL
        do { parsed = try RemoteURL(url) } catch { throw CLIError("favfs: \(error)", status: .dataError) }
        if parsed.password != nil {
            throw CLIError("favfs: the URL holds a password, which would stay in your shell history and the remotes file's URL: give the URL without it (\(parsed)) and the password on standard input with --password-stdin",
                           status: .usage)
        }
        let opts = try OptionPairs.parse(options)
        try RemoteOptionCheck.validate(Array(opts.keys) + Array(parsed.options.keys), for: parsed)
        // Stored options may hold secrets (a session token) and are masked in 'list', but given
        // here they are in the shell's history: say so.
        for key in (Array(opts.keys) + Array(parsed.options.keys)).sorted() where StoredRemote.isSensitive(optionKey: key) {
            FileHandle.standardError.write(Data("favfs: warning: the option '\(key)' looks like a secret and was given on the command line: it may be in your shell history\n".utf8))
        }
        let store = RemotesStore()
        // Refuse a bad file (permissions, syntax) before asking for a secret.
        let existing = try store.loadOrExit()
        if existing[name] != nil && !force {
            throw CLIError("favfs: a remote named '\(name)' exists already; add --force to replace it", status: .usage)
        }
        var secret: String?
        var signedIn: String?
        if passwordStdin {
            secret = try SecretInput.read(prompt: "Secret for \(name) (\(parsed)): ")
        } else if let method = try signInMethod(parsed, options: opts) {
            if let port = redirectPort, !(1...65535).contains(port) {
                throw CLIError("favfs: --redirect-port \(port) is not a port (1-65535)", status: .usage)
            }
            secret = try await InteractiveSignIn(method: method, redirectPort: redirectPort).run()
            signedIn = method.service
        }
        let remote = StoredRemote(name: name, url: url, isDefault: makeDefault, secret: secret, options: opts)
        let file = try store.updateOrExit { file throws(RemotesError) in
            try file.add(remote, replacing: force)
            return file
        }
        let isDefault = file[name]?.isDefault == true
        let stored = signedIn.map { ", signed in to \($0): its refresh token is stored as the secret" } ?? (secret == nil ? "" : ", secret stored")
        print("favfs: \(existing[name] == nil ? "added" : "replaced") remote \(name) (\(parsed))\(isDefault ? ", the default" : "")\(stored) in \(store.path)")
    }

    /// How this remote signs in, when its secret comes from a sign-in (Dropbox, OneDrive), else nil.
    private func signInMethod(_ url: RemoteURL, options: [String: String]) throws -> OAuthSignIn? {
        do {
            return try RemoteSignIn.method(for: RemoteConfiguration(url: url, options: options, name: name))
        } catch {
            throw CLIError("favfs: \(error)", status: .usage)
        }
    }
}

struct RemoteListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the named remotes (secrets are never shown).",
        discussion: """
            Options whose name contains secret, password, token or passphrase are shown as ***, and so is a password in a hand-written URL.

            Example:
              $ favfs remote list
              nas (default)
                url: dav://me@nas.local:8080/files/
                secret: stored
              data
                url: s3://bucket/prefix
                options: region=eu-west-1, session_token=***
                secret: stored
              $ favfs remote list --json | jq -c '.remotes[0]'
              {"default":true,"name":"nas","options":{},"secret_stored":true,"url":"dav://me@nas.local:8080/files/"}
            """)

    @Flag(help: "Print JSON: {\"remotes\": [{\"name\", \"url\", \"default\", \"options\", \"secret_stored\"}]}.")
    var json = false

    func run() throws {
        do { try list() } catch let e as CLIError { e.exit() }
    }

    private struct Listed: Codable {
        var name: String, url: String, `default`: Bool, options: [String: String], secretStored: Bool
    }
    private struct Listing: Codable { var remotes: [Listed]; var file: String }

    private func list() throws {
        let store = RemotesStore()
        let file = try store.loadOrExit()
        if json {
            print(JSONOutput.encode(Listing(remotes: file.remotes.map {
                Listed(name: $0.name, url: StoredRemote.redactedURL($0.url), default: $0.isDefault,
                       options: $0.redactedOptionValues, secretStored: $0.secret != nil)
            }, file: store.path)))
            return
        }
        if file.remotes.isEmpty {
            print("no remotes in \(store.path) (add one: favfs remote add NAME URL)")
            return
        }
        for r in file.remotes {
            print(r.isDefault ? "\(r.name) (default)" : r.name)
            print("  url: \(StoredRemote.redactedURL(r.url))")
            if !r.options.isEmpty { print("  options: \(r.redactedOptions)") }
            print("  secret: \(r.secret == nil ? "none" : "stored")")
        }
    }
}

struct RemoteRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a named remote and its secret (mounts of it keep running; its cache stays).",
        discussion: """
            Example:
              favfs remote remove nas
            """)

    @Argument(help: "The remote's name.", completion: .custom { _, _, _ in RemoteCompletion.names() })
    var name: String

    func run() throws {
        do {
            let store = RemotesStore()
            let removed = try store.updateOrExit { file throws(RemotesError) in try file.remove(name) }
            print("favfs: removed remote \(name) (\(StoredRemote.redactedURL(removed.url)))" +
                  (removed.isDefault ? "; there is no default remote now (favfs remote default NAME)" : ""))
        } catch let e as CLIError { e.exit() }
    }
}

struct RemoteDefaultCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "default",
        abstract: "Make a remote the default one (mounted by 'favfs mount MOUNTPOINT' without --remote); without NAME, show it.",
        discussion: """
            Examples:
              favfs remote default nas
              favfs remote default          # prints the default remote's name
            """)

    @Argument(help: "The remote's name.", completion: .custom { _, _, _ in RemoteCompletion.names() })
    var name: String?

    func run() throws {
        do {
            let store = RemotesStore()
            guard let name else {
                guard let d = try store.loadOrExit().defaultRemote else {
                    throw CLIError("favfs: no default remote (favfs remote default NAME)", status: .configuration)
                }
                print(d.name)
                return
            }
            try store.updateOrExit { file throws(RemotesError) in try file.setDefault(name) }
            print("favfs: \(name) is the default remote")
        } catch let e as CLIError { e.exit() }
    }
}
