import Foundation
import Synchronization

/// Which HTTP authentication scheme each server wants, learnt from its first challenge.
///
/// With `CurlCredentials.Scheme.any`, libcurl sends every request without credentials, waits for
/// the 401 challenge and sends it again: two round trips per request. Worse, a request with a
/// body sends that body twice, and some servers (WsgiDAV's cheroot) answer the first 401 without
/// reading the body; its bytes then stay on the kept-alive connection and the next request on it
/// reads a garbage reply ("Received HTTP/0.9 when not allowed"). Once a server's challenge says
/// it offers Basic only, credentials go with the first request. Digest and the others need their
/// challenge (nonces), so they stay with libcurl's negotiation.
final class AuthSchemeMemory: Sendable {
    /// A server and the user logging in to it.
    struct Key: Hashable, Sendable {
        var origin: String
        var user: String
    }

    /// What a server's challenge said.
    enum Learnt: Sendable, Equatable {
        /// Basic only: send it up front.
        case basic
        /// Something that needs the challenge (Digest, Negotiate, NTLM): let libcurl negotiate.
        case negotiate
        /// A bodiless probe was not challenged (reads may be open while writes are not):
        /// no probe again; a challenge seen later still teaches the scheme.
        case unchallenged
    }

    private let learnt = Mutex<[Key: Learnt]>([:])

    /// What is known about `key`, nil before anything was seen.
    func lookup(_ key: Key) -> Learnt? { learnt.withLock { $0[key] } }

    /// Keeps what a `WWW-Authenticate` challenge (all of a 401's such headers, joined with ", ")
    /// says about `key`.
    func learn(_ key: Key, challenge: String) {
        let scheme = Self.scheme(ofChallenge: challenge)
        learnt.withLock { $0[key] = scheme }
    }

    /// Notes that a probe of `key` was not challenged, unless something better is known.
    func noteUnchallenged(_ key: Key) {
        learnt.withLock { if $0[key] == nil { $0[key] = .unchallenged } }
    }

    /// Basic when every scheme offered is Basic; otherwise the challenge is needed.
    static func scheme(ofChallenge challenge: String) -> Learnt {
        // Challenges are `Scheme param=value, param="v, w", Scheme2 ...`: a scheme is a token at
        // the start or after a comma that is not followed by `=`.
        var schemes: Set<String> = []
        var inQuotes = false
        var token = ""
        var atItemStart = true
        func endToken(next: Character?) {
            if atItemStart && !token.isEmpty && next != "=" { schemes.insert(token.lowercased()) }
            if !token.isEmpty { atItemStart = false }
            token = ""
        }
        for c in challenge {
            if inQuotes {
                if c == "\"" { inQuotes = false }
                continue
            }
            switch c {
            case "\"": inQuotes = true; endToken(next: nil)
            case ",": endToken(next: nil); atItemStart = true
            case " ", "\t": endToken(next: nil)
            case "=": endToken(next: "=")
            default: token.append(c)
            }
        }
        endToken(next: nil)
        return schemes == ["basic"] ? .basic : .negotiate
    }

    /// The origin (`scheme://host:port`, lowercased) of an HTTP(S) URL, nil for other URLs.
    static func origin(of url: String) -> String? {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return nil }
        let afterScheme = lower.index(lower.firstIndex(of: ":")!, offsetBy: 3)
        let rest = lower[afterScheme...]
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<end]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        return String(lower[..<afterScheme]) + authority
    }
}
