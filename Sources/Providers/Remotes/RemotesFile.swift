import Foundation

/// One named remote as kept in the remotes file.
public struct StoredRemote: Sendable, Equatable {
    public var name: String
    /// The URL as given to `favfs remote add` (options in its query allowed; never a password).
    public var url: String
    public var isDefault: Bool
    /// The password or secret key; nil when none is stored.
    public var secret: String?
    public var options: [String: String]

    public init(name: String, url: String, isDefault: Bool = false, secret: String? = nil, options: [String: String] = [:]) {
        self.name = name
        self.url = url
        self.isDefault = isDefault
        self.secret = secret
        self.options = options
    }

    /// Names are `[A-Za-z0-9._-]+`: safe in a table name, a file name and a shell word, and never
    /// mistaken for a URL (no "://").
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)
        }
    }

    /// Whether an option's value is a secret and is shown as `***` (e.g. `session_token`, `key_passphrase`).
    public static func isSensitive(optionKey key: String) -> Bool {
        let k = key.lowercased()
        return ["secret", "password", "token", "passphrase"].contains { k.contains($0) }
    }

    /// The URL for display: no password, sensitive query options as `***`.
    public static func redactedURL(_ url: String) -> String {
        guard var comps = URLComponents(string: url) else { return url }
        if comps.password != nil { comps.password = "***" }
        if let items = comps.queryItems, !items.isEmpty {
            comps.queryItems = items.map { isSensitive(optionKey: $0.name) ? URLQueryItem(name: $0.name, value: "***") : $0 }
        }
        return comps.string ?? url
    }

    /// `k=v, k2=***` (sorted), or "" when there are none.
    public var redactedOptions: String {
        redactedOptionValues.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    }

    /// The options with sensitive values replaced by `***`.
    public var redactedOptionValues: [String: String] {
        Dictionary(uniqueKeysWithValues: options.map { ($0.key, Self.isSensitive(optionKey: $0.key) ? "***" : $0.value) })
    }
}

/// An error about the remotes (unknown name, bad name, no default, the file): a message for the user.
public struct RemotesError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The named remotes: what `favfs remote …` edits and `favfs mount --remote NAME` reads.
/// Order is kept as written (new remotes go last).
public struct RemotesFile: Sendable, Equatable {
    public var remotes: [StoredRemote]

    public init(remotes: [StoredRemote] = []) { self.remotes = remotes }

    public init(parsing text: String) throws(RemotesTOML.ParseError) {
        remotes = try RemotesTOML.parse(text)
    }

    public func serialized() -> String { RemotesTOML.serialize(remotes) }

    public subscript(name: String) -> StoredRemote? { remotes.first { $0.name == name } }

    public var defaultRemote: StoredRemote? { remotes.first { $0.isDefault } }

    /// Adds `remote`; an existing name is replaced only with `replacing` (it stays the default if
    /// it was). `remote.isDefault` makes it the only default.
    public mutating func add(_ remote: StoredRemote, replacing: Bool) throws(RemotesError) {
        guard StoredRemote.isValidName(remote.name) else {
            throw RemotesError("'\(remote.name)' is not a valid remote name: use letters, digits, '.', '_' and '-'")
        }
        var remote = remote
        if let i = remotes.firstIndex(where: { $0.name == remote.name }) {
            guard replacing else {
                throw RemotesError("a remote named '\(remote.name)' exists already (\(StoredRemote.redactedURL(remotes[i].url))); add --force to replace it")
            }
            remote.isDefault = remote.isDefault || remotes[i].isDefault
            remotes[i] = remote
        } else {
            remotes.append(remote)
        }
        if remote.isDefault { try setDefault(remote.name) }
    }

    /// Removes and returns the remote named `name`.
    @discardableResult
    public mutating func remove(_ name: String) throws(RemotesError) -> StoredRemote {
        guard let i = remotes.firstIndex(where: { $0.name == name }) else { throw unknown(name) }
        return remotes.remove(at: i)
    }

    /// Makes `name` the only default remote.
    public mutating func setDefault(_ name: String) throws(RemotesError) {
        guard remotes.contains(where: { $0.name == name }) else { throw unknown(name) }
        for i in remotes.indices { remotes[i].isDefault = remotes[i].name == name }
    }

    func unknown(_ name: String) -> RemotesError {
        let known = remotes.map(\.name)
        return RemotesError("no remote named '\(name)'" +
                            (known.isEmpty ? " (none is configured: favfs remote add NAME URL)" : " (known: \(known.joined(separator: ", ")))"))
    }

    /// The configuration of a named remote (nil: the default one). Options: the URL's query, then
    /// the stored options, then `overrides` (from the command line); later ones win.
    public func configuration(named name: String?, overrides: [String: String] = [:]) throws(RemotesError) -> RemoteConfiguration {
        let remote: StoredRemote
        if let name {
            guard let r = self[name] else { throw unknown(name) }
            remote = r
        } else {
            guard let r = defaultRemote else {
                throw RemotesError("no --remote given and no default remote: favfs remote add NAME URL --default")
            }
            remote = r
        }
        let url: RemoteURL
        do { url = try RemoteURL(remote.url) } catch {
            throw RemotesError("the remote '\(remote.name)' has a bad url: \(error)")
        }
        return RemoteConfiguration(url: url, options: remote.options.merging(overrides) { _, new in new },
                                   secret: remote.secret, name: remote.name)
    }
}
