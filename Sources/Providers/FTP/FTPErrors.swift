import Curl
import FavFSCore
import Foundation

/// FTP reply codes and libcurl results → `ProviderError`, naming the remote, the path, the
/// command and the server's reply (its code is the error's `status`).
struct FTPErrors: Sendable {
    let remote: String

    /// An error for a transfer that failed. `command` names what was being done (`MLSD`, `RETR`,
    /// `STOR`, `RNTO`...); the server's last reply decides the kind where there is one.
    func transport(_ error: Error, command: String, path: String) -> ProviderError {
        if let error = error as? ProviderError { return error }
        guard let t = error as? TransportError else {
            if error is CancellationError {
                return ProviderError(.cancelled, remote: remote, path: path, detail: "\(command) cancelled")
            }
            return ProviderError(.unreachable, remote: remote, path: path, detail: "\(command) failed: \(error)")
        }
        let reply = FTPReply.group(t.replyLines).last
        switch t.kind {
        case .cancelled:
            return ProviderError(.cancelled, remote: remote, path: path, detail: "\(command) cancelled")
        case .timedOut:
            return ProviderError(.timedOut, remote: remote, path: path, status: reply?.code,
                                 detail: "\(command) timed out: \(t.message)")
        case .couldNotConnect:
            return ProviderError(.unreachable, remote: remote, path: path, detail: "cannot connect to the FTP server: \(t.message)")
        case .tls:
            return ProviderError(.unreachable, remote: remote, path: path, status: reply?.code, detail: tlsDetail(t))
        case .writeFailed:
            return ProviderError(t.errno == ENOSPC || t.errno == EDQUOT ? .noSpace : .localIO, remote: remote, path: path,
                                 detail: "\(command): writing to the content cache failed: \(t.message)")
        case .readFailed:
            return ProviderError(.localIO, remote: remote, path: path, detail: "\(command): reading the upload source failed: \(t.message)")
        case .bodyTooLarge:
            return ProviderError(.invalidResponse, remote: remote, path: path, detail: "\(command) failed: \(t.message)")
        case .other:
            break
        }
        switch t.code {
        case 67:  // CURLE_LOGIN_DENIED
            return ProviderError(.denied, remote: remote, path: path, status: reply?.code,
                                 detail: "login refused: \(reply?.text ?? t.message)")
        case 64:  // CURLE_USE_SSL_FAILED: AUTH TLS refused
            return ProviderError(.unreachable, remote: remote, path: path, status: reply?.code,
                                 detail: "TLS required but the server refused AUTH TLS: \(reply?.text ?? t.message)")
        default:
            break
        }
        if let reply, reply.code >= 400 {
            return self.reply(reply, command: command, path: path)
        }
        switch t.code {
        case 78:  // CURLE_REMOTE_FILE_NOT_FOUND
            return ProviderError(.notFound, remote: remote, path: path, detail: "\(command) failed: \(t.message)")
        case 9:  // CURLE_REMOTE_ACCESS_DENIED (a CWD was refused)
            return ProviderError(.denied, remote: remote, path: path, detail: "\(command) failed: \(t.message)")
        default:
            return ProviderError(.unreachable, remote: remote, path: path, status: reply?.code,
                                 detail: "\(command) failed: \(t.message) (curl \(t.code))")
        }
    }

    /// An error for a refusal reply (4xx/5xx) to `command`.
    func reply(_ reply: FTPReply, command: String, path: String) -> ProviderError {
        let text = reply.text
        let lower = text.lowercased()
        let kind: ProviderError.Kind
        switch reply.code {
        case 530, 532: kind = .denied
        case 550, 450:
            kind = Self.kind(ofRefusal: lower) ?? (reply.code == 450 ? .serverError : .notFound)
        case 553: kind = Self.kind(ofRefusal: lower) ?? .denied  // file name not allowed
        case 552, 452: kind = .noSpace  // exceeded storage allocation / insufficient storage
        case 500, 502, 504: kind = .notSupported  // command not understood / not implemented
        case 421, 425, 426: kind = .unreachable  // service closing, data connection failed
        default: kind = .serverError
        }
        return ProviderError(kind, remote: remote, path: path, status: reply.code, detail: "\(command) refused: \(text)")
    }

    /// Reads a 550's text: servers use one code for "missing", "forbidden", "exists" and "not empty".
    static func kind(ofRefusal lower: String) -> ProviderError.Kind? {
        if lower.contains("not empty") { return .notEmpty }
        if lower.contains("exists") { return .exists }
        if lower.contains("no such") || lower.contains("not found") || lower.contains("not exist")
            || lower.contains("doesn't exist") || lower.contains("cannot find") || lower.contains("can't find") { return .notFound }
        if lower.contains("denied") || lower.contains("permission") || lower.contains("privilege") || lower.contains("not allowed")
            || lower.contains("forbidden") || lower.contains("read-only") || lower.contains("read only") { return .denied }
        if lower.contains("quota") || lower.contains("no space") || lower.contains("disk full") { return .noSpace }
        if lower.contains("not a directory") { return .notAFolder }
        if lower.contains("is a directory") { return .isAFolder }
        return nil
    }

    /// A TLS failure named as one: certificate verification or the handshake.
    private func tlsDetail(_ t: TransportError) -> String {
        switch t.code {
        case 60:  // CURLE_PEER_FAILED_VERIFICATION
            return "TLS: the server's certificate is not trusted (\(t.message)); give its CA with the option ca_certificate=/path/ca.pem, or tls_verify=false to skip verification"
        case 77:  // CURLE_SSL_CACERT_BADFILE
            return "TLS: the CA certificate file cannot be read (\(t.message))"
        case 64:
            return "TLS required but the server refused AUTH TLS (\(t.message))"
        default:
            return "TLS handshake failed: \(t.message) (curl \(t.code))"
        }
    }

    func invalid(_ what: String, command: String, path: String, status: Int? = nil) -> ProviderError {
        ProviderError(.invalidResponse, remote: remote, path: path, status: status, detail: "\(command): \(what)")
    }
}
