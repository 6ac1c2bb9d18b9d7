// The transport's public value types: requests, responses, errors, limits.
import Foundation

/// One header line.
public struct CurlHeader: Sendable, Equatable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) { self.name = name; self.value = value }
}

/// How to authenticate. `.any` lets libcurl pick Basic or Digest from the server's challenge.
public struct CurlCredentials: Sendable, Equatable {
    public enum Scheme: Sendable { case any, basic, digest }
    public var user: String
    public var password: String
    public var scheme: Scheme
    public init(user: String, password: String, scheme: Scheme = .any) {
        self.user = user; self.password = password; self.scheme = scheme
    }
}

/// A request: method, absolute URL (already percent-encoded), headers, optional body.
public struct CurlRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [CurlHeader]
    public var body: Data?
    public var credentials: CurlCredentials?
    /// Protocol options (FTP/SFTP commands, ranges, SSH keys, SigV4), applied in order.
    public var options: [CurlOption]
    /// For `perform`: the most body bytes kept in memory; a longer body ends the transfer with
    /// `.bodyTooLarge` (nil: no limit). A server's answer never grows the daemon unbounded
    /// where the caller expects a short one.
    public var maxBodyBytes: Int?
    public init(method: String = "GET", url: String, headers: [CurlHeader] = [], body: Data? = nil,
                credentials: CurlCredentials? = nil, options: [CurlOption] = [], maxBodyBytes: Int? = nil) {
        self.method = method; self.url = url; self.headers = headers; self.body = body; self.credentials = credentials
        self.options = options; self.maxBodyBytes = maxBodyBytes
    }
}

/// A response. For FTP the status is the last reply code; for SFTP 0. Header names are lowercased; repeated headers are joined with ", ".
public struct CurlResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    /// The body, for `perform`; for `download` only a non-2xx body (the error text).
    public var body: Data
    /// For `download`: bytes written to the file descriptor.
    public var bytesWritten: Int64
    /// The remote modification time in seconds since 1970, when `.fileTime` was asked and known.
    public var fileTime: Int64?
    /// The content length the server announced (FTP SIZE, SFTP stat, HTTP Content-Length).
    public var contentLength: Int64?
    /// FTP: every control-connection reply line in order, without CRLF (e.g. `250-Listing "/a":`,
    /// ` type=file;size=3; /a`, `250 End`): how the replies to QUOTE commands (MLST, FEAT) are seen.
    /// Empty for HTTP.
    public var replyLines: [String] = []
    public init(status: Int, headers: [String: String], body: Data, bytesWritten: Int64 = 0) {
        self.status = status; self.headers = headers; self.body = body; self.bytesWritten = bytesWritten
    }
}

/// A transfer that failed before a complete response arrived.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case couldNotConnect   // refused, DNS, unreachable
        case timedOut          // connect timeout or below the low-speed limit for too long
        case tls               // certificate or handshake
        case cancelled         // the awaiting Task was cancelled
        case writeFailed       // the destination fd refused bytes (disk full: errno set)
        case readFailed        // an upload's source fd could not be read (errno set), or ended early
        case bodyTooLarge      // an in-memory body passed the request's `maxBodyBytes`
        case other
    }
    public var kind: Kind
    /// The libcurl result code.
    public var code: Int
    /// libcurl's error buffer or strerror.
    public var message: String
    /// The URL, without credentials.
    public var url: String
    /// errno of a failed local write (ENOSPC...) when kind == .writeFailed, or of a failed read
    /// of an upload's source when kind == .readFailed (nil when the source ended early).
    public var errno: Int32?
    /// FTP: the control-connection reply lines read before the failure (the last one is usually
    /// the refusal, e.g. `550 No such file or directory.`). Empty for HTTP.
    public var replyLines: [String] = []
    /// SFTP: why the server's host key was refused (CURLE_PEER_FAILED_VERIFICATION), when known.
    public var sshHostKey: SSHHostKeyProblem?
    /// SFTP: the host key the server offered (its SSH wire-format blob), when it was refused.
    public var sshOfferedKey: [UInt8]?
    public init(kind: Kind, code: Int, message: String, url: String, errno: Int32? = nil) {
        self.kind = kind; self.code = code; self.message = message; self.url = url; self.errno = errno
    }
    public var description: String { "\(url): \(message) (curl \(code))" }
}

/// Why an SSH server's host key was refused: it is not in the known_hosts file, or it differs
/// from the key recorded there for that host.
public enum SSHHostKeyProblem: Sendable, Equatable {
    case unknown
    case changed
}

/// Limits every transfer has, so that no operation can hang.
public struct TransportOptions: Sendable {
    public var connectTimeout: Double = 10
    /// Abort when fewer than `lowSpeedLimit` bytes/s arrive for `lowSpeedTime` seconds.
    public var lowSpeedLimit: Int = 1
    public var lowSpeedTime: Int = 30
    public var maxConnectionsPerHost: Int = 8
    public var userAgent: String = "favfs"
    public var verifyTLS: Bool = true
    /// Scheduling niceness of the transfer thread (0: as the process). Listings run at +5 so
    /// that receiving a 40 MB listing yields the CPU to a reader's first byte.
    public var niceness: Int = 0
    public init() {}
}
