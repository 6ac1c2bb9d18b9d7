import FavFSCore

/// favfs's exit statuses, from sysexits(3), so scripts and systemd can tell a typo from a
/// server that is down. Documented in the man page and docs/commands.md (checked by DocumentationTests).
enum ExitStatus: Int32, Sendable {
    case ok = 0
    /// Anything not classified below (kept at 1 for compatibility with scripts that test `!= 0`).
    case failure = 1
    /// EX_USAGE: a wrong command line, or none at all.
    case usage = 64
    /// EX_DATAERR: a URL or value that cannot be right (bad URL, unknown remote option).
    case dataError = 65
    /// EX_UNAVAILABLE: the server cannot be reached, or does not speak the protocol at that URL.
    case unavailable = 69
    /// EX_SOFTWARE: a bug in favfs.
    case software = 70
    /// EX_IOERR: the local disk, the cache or FUSE failed.
    case ioError = 74
    /// EX_TEMPFAIL: try again later (a server error, a lock, a mount that does not answer yet).
    case temporaryFailure = 75
    /// EX_NOPERM: authentication failed or access denied.
    case permission = 77
    /// EX_CONFIG: the configuration (remotes file, fuse.conf, cache dir, mount point) is wrong.
    case configuration = 78

    /// The status for a provider error met while mounting or testing a remote.
    static func of(_ error: ProviderError) -> ExitStatus {
        switch error.kind {
        case .denied: return .permission
        case .unreachable, .timedOut, .invalidResponse: return .unavailable
        case .serverError, .locked, .cancelled: return .temporaryFailure
        case .notFound, .notAFolder, .invalidName, .nameTooLong, .notSupported: return .dataError
        case .localIO, .noSpace, .tooLarge: return .ioError
        default: return .failure
        }
    }
}
