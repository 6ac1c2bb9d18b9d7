// Per-request libcurl options beyond HTTP method/headers/body: what the FTP, SFTP and S3
// providers need. Typed, so providers never touch CCurl.
import Foundation

/// One extra libcurl option for a request. Each maps to exactly one `CURLOPT_*`.
public enum CurlOption: Sendable, Equatable {
    /// CURLOPT_RANGE: `"start-end"` (inclusive), for FTP (REST) and SFTP (seek) ranged reads.
    case range(String)
    /// CURLOPT_QUOTE: protocol commands run before the transfer (FTP: `RNFR x`; SFTP: `rename a b`).
    case quote([String])
    /// CURLOPT_POSTQUOTE: commands run after the transfer.
    case postQuote([String])
    /// CURLOPT_NOBODY: no content (FTP/SFTP: a stat; with `.fileTime`, the mtime too).
    case noBody
    /// CURLOPT_FILETIME: ask for the remote modification time (`CurlResponse.fileTime`).
    case fileTime
    /// CURLOPT_DIRLISTONLY: names only (FTP NLST; SFTP names without the long format).
    case dirListOnly
    /// CURLOPT_CUSTOMREQUEST for FTP/SFTP listings (e.g. `MLSD`). For HTTP set `CurlRequest.method`.
    case customRequest(String)
    /// CURLOPT_USE_SSL: `.all` for FTPS (explicit TLS on `ftp://` or implicit on `ftps://`).
    case useSSL(SSLLevel)
    /// TLS 1.2 at most (CURLOPT_SSLVERSION). FTPS uploads need it: over TLS 1.3 the server's
    /// session tickets arrive on the data connection after the handshake, libcurl never reads
    /// them, and its close then resets the connection, losing the upload's tail (curl
    /// KNOWN_BUGS "FTPS upload data loss with TLS 1.3", curl/curl#6149).
    case tlsAtMost12
    /// CURLOPT_FTP_SKIP_PASV_IP: connect to the control host, not the address in the 227 reply.
    case ftpSkipPasvIP(Bool)
    /// CURLOPT_FTP_FILEMETHOD: how curl walks to a path (1 multicwd, 2 nocwd, 3 singlecwd).
    case ftpFileMethod(Int)
    /// CURLOPT_SSH_KNOWNHOSTS: the known_hosts file the host key must be in.
    case sshKnownHosts(String)
    /// CURLOPT_SSH_PRIVATE_KEYFILE / CURLOPT_KEYPASSWD.
    case sshPrivateKeyFile(String)
    case keyPassword(String)
    /// CURLOPT_SSH_AUTH_TYPES bit mask (CURLSSH_AUTH_PUBLICKEY = 1, PASSWORD = 2, ...).
    case sshAuthTypes(Int)
    /// CURLOPT_NEW_FILE_PERMS for SFTP uploads.
    case newFilePermissions(Int)
    /// CURLOPT_AWS_SIGV4: `"aws:amz:REGION:s3"`; the credentials are the request's user/password.
    case awsSigV4(String)
    /// CURLOPT_CAINFO: a PEM file of CA certificates to verify the server's certificate with
    /// (instead of the system's), e.g. for an FTPS or HTTPS server with a private CA.
    case caInfo(String)
    /// CURLOPT_FORBID_REUSE: close the connection after this transfer, for a request whose reply
    /// may leave bytes behind (WsgiDAV sends a body with its 401 to a HEAD).
    case forbidReuse
    /// CURLOPT_TIMEOUT_MS: the whole transfer's bound, for a request that is meant to wait (a
    /// long poll): it must still end when the server never answers.
    case timeout(seconds: Double)
    /// CURLOPT_LOW_SPEED_TIME for this request: a long poll is silent by design, so the
    /// transport's stall limit (seconds without a byte) must be longer than its wait.
    case lowSpeedTime(seconds: Int)
    /// CURLOPT_TCP_KEEPALIVE with CURLOPT_TCP_KEEPIDLE and CURLOPT_TCP_KEEPINTVL at `seconds`:
    /// a silent connection whose peer vanished (no reset) is noticed before the timeout.
    case tcpKeepAlive(seconds: Int)
    /// CURLOPT_IGNORE_CONTENT_LENGTH: for FTP, no SIZE of libcurl's own before RETR (the
    /// caller knows the size, or checks it by its own commands); the transfer ends when the
    /// server closes the data connection.
    case ignoreContentLength

    public enum SSLLevel: Int, Sendable { case none = 0, tryTLS = 1, control = 2, all = 3 }
}
