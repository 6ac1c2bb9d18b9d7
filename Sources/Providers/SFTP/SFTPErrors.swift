import Curl
import FavFSCore
import Foundation

/// libcurl's SFTP failures → `ProviderError`, naming remote, path, the operation and the SFTP
/// status text libcurl put in its error buffer. `status` is the CURLcode (SFTP has no HTTP status).
struct SFTPErrors: Sendable {
    let remote: String
    /// `127.0.0.1:2222`, for host key messages.
    let hostAndPort: String
    /// The known_hosts file as the user gave it (`~/.ssh/known_hosts`), for host key messages.
    let knownHostsDisplay: String
    let knownHostsPath: String
    /// Said with a refused login: what to check (e.g. an RSA key libssh2 cannot sign acceptably).
    var loginHint = "check the user, the key (option key) or the password"
    /// The rewritten known_hosts, to explain a key exchange that fails on an ssh-rsa-only entry.
    var knownHosts: KnownHostsFile?

    // libcurl result codes the SFTP provider tells apart.
    static let couldNotConnect = 7, remoteAccessDenied = 9, quoteError = 21, timedOut = 28
    static let badDownloadResume = 36, peerFailedVerification = 60, loginDenied = 67
    static let remoteDiskFull = 70, remoteFileExists = 73, remoteFileNotFound = 78, ssh = 79

    /// An error for a failed request doing `operation` on `path`.
    func transport(_ error: Error, operation: String, path: String) -> ProviderError {
        if let error = error as? ProviderError { return error }
        guard let t = error as? TransportError else {
            if error is CancellationError {
                return ProviderError(.cancelled, remote: remote, path: path, detail: "\(operation) cancelled")
            }
            return ProviderError(.unreachable, remote: remote, path: path, detail: "\(operation) failed: \(error)")
        }
        let detail = "\(operation) failed: \(t.message)"
        switch t.kind {
        case .cancelled:
            return ProviderError(.cancelled, remote: remote, path: path, detail: "\(operation) cancelled")
        case .timedOut:
            return ProviderError(.timedOut, remote: remote, path: path, status: t.code, detail: detail)
        case .writeFailed:
            let kind: ProviderError.Kind = t.errno == ENOSPC || t.errno == EDQUOT ? .noSpace : .localIO
            return ProviderError(kind, remote: remote, path: path, status: t.code,
                                 detail: "\(operation): writing to the content cache failed: \(t.message)")
        case .readFailed:
            return ProviderError(.localIO, remote: remote, path: path, status: t.code,
                                 detail: "\(operation): reading the content cache failed: \(t.message)")
        case .bodyTooLarge:
            return ProviderError(.invalidResponse, remote: remote, path: path, detail: "\(operation) failed: \(t.message)")
        case .couldNotConnect, .tls, .other:
            break
        }
        switch t.code {
        case Self.peerFailedVerification:
            return ProviderError(.denied, remote: remote, path: path, status: t.code, detail: hostKeyMessage(t.sshHostKey, offered: t.sshOfferedKey.flatMap(SSHFingerprint.describe)))
        case Self.loginDenied:
            return ProviderError(.denied, remote: remote, path: path, status: t.code,
                                 detail: "\(operation) failed: the server refused the login (\(t.message)); \(loginHint)")
        case Self.remoteFileNotFound:
            return ProviderError(.notFound, remote: remote, path: path, status: t.code, detail: detail)
        case Self.remoteAccessDenied:
            return ProviderError(.denied, remote: remote, path: path, status: t.code, detail: detail)
        case Self.remoteDiskFull:
            return ProviderError(.noSpace, remote: remote, path: path, status: t.code, detail: detail)
        case Self.remoteFileExists:
            return ProviderError(.exists, remote: remote, path: path, status: t.code, detail: detail)
        case Self.quoteError:
            return ProviderError(Self.quoteKind(t.message), remote: remote, path: path, status: t.code, detail: detail)
        case Self.couldNotConnect:
            return ProviderError(.unreachable, remote: remote, path: path, status: t.code, detail: detail)
        default:
            // CURLE_SSH and friends: the session broke (or could not be set up).
            if t.code == Self.ssh, knownHosts?.onlyRSA == true {
                return ProviderError(.denied, remote: remote, path: path, status: t.code, detail: detail
                    + "; \(knownHostsDisplay) knows only an ssh-rsa host key for \(hostAndPort), which libssh2 1.10 can check only with the SHA-1 ssh-rsa algorithm that OpenSSH 8.8+ refuses — add the server's ed25519 key: ssh-keyscan -t ed25519 -p \(port) \(host) >> \(knownHostsDisplay)")
            }
            return ProviderError(.unreachable, remote: remote, path: path, status: t.code, detail: detail)
        }
    }

    /// The kind of a failed quote command (`rename`, `rm`, `mkdir`...), from the SFTP status
    /// text in libcurl's message ("rm command failed: No such file or directory"). OpenSSH speaks
    /// SFTP version 3, which reports "exists" and "not empty" only as a generic "Operation
    /// failed": callers look at the server to tell those apart (see `SFTPProvider.diagnose`).
    static func quoteKind(_ message: String) -> ProviderError.Kind {
        let m = message.lowercased()
        if m.contains("no such file") || m.contains("no such path") { return .notFound }
        if m.contains("permission denied") || m.contains("write protect") { return .denied }
        if m.contains("already exists") { return .exists }
        if m.contains("not empty") { return .notEmpty }
        if m.contains("no space") || m.contains("quota") { return .noSpace }
        if m.contains("not a directory") { return .notAFolder }
        if m.contains("is a directory") { return .isAFolder }
        return .serverError
    }

    private var host: String { String(hostAndPort[..<(hostAndPort.lastIndex(of: ":") ?? hostAndPort.endIndex)]) }
    private var port: String { hostAndPort.lastIndex(of: ":").map { String(hostAndPort[hostAndPort.index(after: $0)...]) } ?? "22" }

    /// What to say when the host key was refused, and how to fix it.
    /// `offered`: the server's key as OpenSSH names it ("ssh-ed25519 SHA256:…"), when known.
    func hostKeyMessage(_ problem: SSHHostKeyProblem?, offered: String? = nil) -> String {
        // known_hosts names a host on a port other than 22 as [host]:port.
        let entry = port == "22" ? host : "[\(host)]:\(port)"
        let key = offered.map { "; the server offers \($0)" } ?? ""
        switch problem {
        case .unknown:
            let exists = FileManager.default.fileExists(atPath: knownHostsPath)
            return "the host key for \(hostAndPort) is not in \(knownHostsDisplay)\(exists ? "" : " (the file does not exist)")\(key) — if that is the server's fingerprint (ask its admin, or run ssh-keygen -lf on its /etc/ssh/ssh_host_*_key.pub), add it with ssh-keyscan -p \(port) \(host) >> \(knownHostsDisplay), or connect once with ssh"
        case .changed:
            return "WARNING: the host key for \(hostAndPort) has CHANGED: it differs from the one in \(knownHostsDisplay)\(key) — someone may be intercepting the connection; if the server's key really changed, remove the old entry with ssh-keygen -R '\(entry)' -f \(knownHostsDisplay)"
        case nil:
            return "the host key for \(hostAndPort) was refused (not verifiable against \(knownHostsDisplay): unsupported key type?)"
        }
    }
}
