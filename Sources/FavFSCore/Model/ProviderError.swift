/// An error from a provider or the core: what went wrong, at which remote and path, and the
/// protocol status when there was one. The FUSE bridge maps `kind` to exactly one errno.
public struct ProviderError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case notFound          // ENOENT
        case denied            // EACCES (wrong credentials, forbidden)
        case exists            // EEXIST
        case notEmpty          // ENOTEMPTY
        case noSpace           // ENOSPC (disk full, quota)
        case tooLarge          // EFBIG
        case notSupported      // ENOTSUP
        case readOnly          // EROFS
        case crossDevice       // EXDEV
        case versionChanged    // ESTALE: the remote changed under us
        case notAFolder        // ENOTDIR
        case isAFolder         // EISDIR
        case invalidName       // EINVAL
        case nameTooLong       // ENAMETOOLONG: the path is longer than the remote can store
        case unreachable       // EIO: connect failed, DNS, TLS
        case timedOut          // EIO: connect or low-speed timeout
        case invalidResponse   // EIO: the server said something we cannot parse
        case serverError       // EIO: 5xx and other unexpected statuses
        case cancelled         // EINTR
        case locked            // EBUSY: another client holds a lock on it; try again later
        case localIO           // EIO: the cache disk or database failed
        case badHandle         // EBADF: a file handle this mount does not know
    }

    public var kind: Kind
    /// The remote, without credentials (e.g. `dav://127.0.0.1:8080/files`).
    public var remote: String
    /// The item's path below the remote's root.
    public var path: String
    /// The HTTP status (or protocol reply code) when the server answered.
    public var status: Int?
    /// What happened, in words.
    public var detail: String

    public init(_ kind: Kind, remote: String = "", path: String = "", status: Int? = nil, detail: String) {
        self.kind = kind
        self.remote = remote
        self.path = path
        self.status = status
        self.detail = detail
    }

    public var description: String {
        var s = remote.isEmpty ? "" : remote
        if !path.isEmpty { s += (s.isEmpty ? "" : " ") + path }
        s += (s.isEmpty ? "" : ": ") + detail
        if let status { s += " (status \(status))" }
        return s
    }

    /// True for failures worth retrying later (network), false for answers (not found, denied).
    public var isTransient: Bool {
        switch kind {
        case .unreachable, .timedOut, .serverError, .locked: return true
        default: return false
        }
    }
}
