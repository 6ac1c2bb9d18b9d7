import FavFSCore
import Foundation

/// An AWS access key pair, and the session token of temporary credentials.
struct S3Credentials: Sendable, Equatable, CustomStringConvertible {
    var accessKeyId: String
    var secretAccessKey: String
    var sessionToken: String?

    /// Where the credentials were found, for messages (never the secret itself).
    var source: String

    /// Never prints the secret or the token.
    var description: String { "access key \(accessKeyId) from \(source)" }

    /// Finds credentials in this order: the remote's secret (with the `access_key_id` option or
    /// the URL's user as the key ID); the environment (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`); the shared credentials file
    /// (`AWS_SHARED_CREDENTIALS_FILE` or `~/.aws/credentials`), profile from the `profile`
    /// option, `AWS_PROFILE` or `default`. Nil: none anywhere (anonymous requests, public buckets).
    static func resolve(_ configuration: RemoteConfiguration, environment: [String: String],
                        home: String) throws -> S3Credentials? {
        let remote = configuration.url.description
        if let secret = configuration.secret ?? configuration.url.password {
            guard let keyId = configuration.options["access_key_id"] ?? configuration.url.user, !keyId.isEmpty else {
                throw ProviderError(.denied, remote: remote,
                                    detail: "a secret key was given but no access key ID: set the access_key_id option")
            }
            return S3Credentials(accessKeyId: keyId, secretAccessKey: secret, sessionToken: nil, source: "the remote's configuration")
        }
        if let keyId = environment["AWS_ACCESS_KEY_ID"], !keyId.isEmpty,
           let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty {
            let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            return S3Credentials(accessKeyId: keyId, secretAccessKey: secret, sessionToken: token, source: "the environment")
        }
        let file = environment["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials"
        let profile = configuration.options["profile"] ?? environment["AWS_PROFILE"] ?? "default"
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            if configuration.options["profile"] != nil {
                throw ProviderError(.denied, remote: remote, detail: "profile '\(profile)' was asked for but \(file) cannot be read")
            }
            return nil
        }
        let sections = parseINI(text)
        guard let section = sections[profile] ?? sections["profile " + profile] else {
            if configuration.options["profile"] != nil || environment["AWS_PROFILE"] != nil {
                throw ProviderError(.denied, remote: remote, detail: "no profile '\(profile)' in \(file)")
            }
            return nil
        }
        guard let keyId = section["aws_access_key_id"], let secret = section["aws_secret_access_key"] else {
            throw ProviderError(.denied, remote: remote,
                                detail: "profile '\(profile)' in \(file) lacks aws_access_key_id or aws_secret_access_key")
        }
        return S3Credentials(accessKeyId: keyId, secretAccessKey: secret, sessionToken: section["aws_session_token"],
                             source: "profile '\(profile)' in \(file)")
    }

    /// An INI file as sections of key = value. `#` and `;` start comment lines; keys are
    /// lowercased; values are trimmed; a line before any section is ignored.
    static func parseINI(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                let name = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                current = name
                if sections[name] == nil { sections[name] = [:] }
                continue
            }
            guard let current, let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            sections[current]?[key] = value
        }
        return sections
    }
}
