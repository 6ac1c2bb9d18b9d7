import Foundation
import FavFSCore

/// Everything a provider is made from: the URL, its options and the one secret.
///
/// Options come from the URL's query, from `favfs remote add --option k=v` and from
/// `favfs mount --option k=v`; later ones win. The secret (a password, an S3 secret key, a key
/// passphrase) comes from `--password-stdin` or the remotes file, never from a command line.
public struct RemoteConfiguration: Sendable {
    public var url: RemoteURL
    public var options: [String: String]
    /// The password or secret key; nil when none was given (a password in the URL is used then).
    public var secret: String?
    /// The named remote this came from, if any (for messages).
    public var name: String?

    public init(url: RemoteURL, options: [String: String] = [:], secret: String? = nil, name: String? = nil) {
        self.url = url
        self.options = url.options.merging(options) { _, new in new }
        self.secret = secret
        self.name = name
    }

    /// The secret to use: the given one, else the password in the URL.
    public var password: String? { secret ?? url.password }

    /// Throws when an option is not one the provider knows (a typo must not be ignored silently).
    public func requireKnownOptions(_ known: Set<String>) throws {
        let unknown = Set(options.keys).subtracting(known)
        guard unknown.isEmpty else {
            let list = known.isEmpty ? "none" : known.sorted().joined(separator: ", ")
            throw ProviderError(.invalidName, remote: url.description,
                                detail: "unknown option \(unknown.sorted().map { "'\($0)'" }.joined(separator: ", ")) for \(url.scheme):// remotes (known: \(list))")
        }
    }

    /// A yes/no option: true, yes, 1, on (case-insensitive) are true.
    public func flag(_ key: String, default value: Bool = false) -> Bool {
        guard let v = options[key]?.lowercased() else { return value }
        return ["true", "yes", "1", "on"].contains(v)
    }
}
