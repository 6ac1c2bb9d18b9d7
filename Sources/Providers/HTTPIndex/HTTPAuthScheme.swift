import Curl

/// Which authentication scheme the remote wants, learnt once.
///
/// With `CurlCredentials.Scheme.any` libcurl sends every request without credentials first and
/// answers the 401 challenge, so each request costs two round trips — a listing that sends a
/// HEAD per file would send twice as many. One unauthenticated probe of the root tells the
/// scheme: when the server offers Basic only, credentials are sent with the first request from
/// then on. Digest needs its challenge anyway (nonces), so it stays `.any`.
actor HTTPAuthScheme {
    private let credentials: CurlCredentials?
    private var learnt: CurlCredentials?

    init(credentials: CurlCredentials?) {
        self.credentials = credentials
        if let credentials, credentials.scheme != .any { learnt = credentials }
    }

    /// The credentials to send; `probe` asks the server without credentials and returns its
    /// status and `WWW-Authenticate` header (nil when it could not be asked).
    func resolve(probe: @Sendable () async -> (status: Int, challenge: String?)?) async -> CurlCredentials? {
        guard var credentials else { return nil }
        if let learnt { return learnt }
        guard let answer = await probe() else { return credentials }  // unreachable: decide next time
        if let learnt { return learnt }  // another caller finished first
        if answer.status == 401, let challenge = answer.challenge?.lowercased(),
           challenge.hasPrefix("basic") || challenge.contains(", basic"), !challenge.contains("digest") {
            credentials.scheme = .basic
        }
        learnt = credentials
        return credentials
    }
}
