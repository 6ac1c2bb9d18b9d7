import CCurl
import Foundation

/// Async libcurl: one multi handle driven by one thread; any number of concurrent transfers,
/// connections reused across them.
///
/// No caller thread blocks on the network: a call queues its transfer for the loop thread and
/// suspends until the loop resumes it.
public final class CurlTransport: Sendable {
    let options: TransportOptions
    let loop: CurlLoop
    let authSchemes = AuthSchemeMemory()

    /// Starts the transfer thread. Every transfer gets the limits in `options`.
    public init(options: TransportOptions = TransportOptions()) {
        self.options = options
        self.loop = CurlLoop(options: options)
    }

    deinit { loop.shutdown() }

    /// Performs a request and returns the whole response in memory.
    public func perform(_ request: CurlRequest) async throws -> CurlResponse {
        try await run(request) { CurlTransfer(request: $0, sink: .memory, options: options) }.response
    }

    /// Performs a request whose 2xx body is written to `fd` with pwrite at `offset`, `offset+1`, ...
    /// A non-2xx body is returned in `body` instead (for the error message). `progress`, when
    /// given, is called on the transfer thread after each write with the range written so far
    /// (quick, never blocking): a reader can follow the file as it grows.
    public func download(_ request: CurlRequest, into fd: Int32, at offset: Int64,
                         progress: (@Sendable (Range<Int64>) -> Void)? = nil) async throws -> CurlResponse {
        try await run(request) {
            let transfer = CurlTransfer(request: $0, sink: .file(fd: fd, placement: .fixed(offset)), options: options)
            transfer.progress = progress
            return transfer
        }.response
    }

    /// Performs a request whose body is `length` bytes of `fd` from `offset` (default 0), streamed
    /// with pread as curl sends (CURLOPT_UPLOAD; the method comes from the request, e.g. PUT). The
    /// file is never loaded into memory. A failed read aborts the transfer with `.readFailed`.
    /// `request.body` is ignored. The response body is returned in memory. A non-zero `offset`
    /// sends one slice of a file (an S3 multipart upload's part).
    public func upload(_ request: CurlRequest, from fd: Int32, length: Int64, offset: Int64 = 0) async throws -> CurlResponse {
        try await run(request, hasBody: true) {
            CurlTransfer(request: $0, sink: .memory, options: options,
                         upload: UploadSource(fd: fd, length: max(0, length), offset: max(0, offset)))
        }.response
    }

    /// Like `upload`, for a file still being written: the body is sent chunked (length unknown),
    /// each read as far as `growth` says the file has grown, pausing while it says wait, and
    /// ends when it says ended. An `.abandoned` answer fails the transfer with `.readFailed`.
    public func uploadGrowing(_ request: CurlRequest, from fd: Int32, growth: @escaping UploadGrowthPoll) async throws -> CurlResponse {
        try await run(request, hasBody: true) {
            CurlTransfer(request: $0, sink: .memory, options: options, upload: UploadSource(fd: fd, length: 0, growth: growth))
        }.response
    }

    /// A ranged download whose write offset follows the response: a 206 body goes to the start
    /// in its `Content-Range`, a 200 body (the server ignored `Range`) to offset 0, so the bytes
    /// always land at their own offset in the file. Returns the response and where writing began.
    /// `progress`, when given, is called on the transfer thread after each write with the range
    /// written so far (2xx bodies only); it must be quick and must not block.
    package func downloadRange(_ request: CurlRequest, into fd: Int32, requestedStart: Int64,
                               progress: (@Sendable (Range<Int64>) -> Void)? = nil) async throws
        -> (response: CurlResponse, writtenAt: Int64)
    {
        let done = try await run(request) {
            let transfer = CurlTransfer(request: $0, sink: .file(fd: fd, placement: .followResponse(requestedStart: requestedStart)),
                                        options: options)
            transfer.progress = progress
            return transfer
        }
        return (done.response, done.writtenAt)
    }

    /// New connections opened so far (sum of CURLINFO_NUM_CONNECTS), to check connection reuse.
    var connectionsOpened: Int { loop.connectionsOpened }

    /// Runs `request` (made into a transfer by `make`) with the auth scheme the server is known to
    /// want, and learns it from a challenge (see `AuthSchemeMemory`). A request with a body to a
    /// server not yet known is preceded by one bodiless probe, so no body is sent unauthenticated.
    private func run(_ request: CurlRequest, hasBody: Bool = false,
                     make: (CurlRequest) -> CurlTransfer) async throws -> CurlTransfer.Completed {
        guard let credentials = request.credentials, credentials.scheme == .any,
              !request.options.contains(where: { if case .awsSigV4 = $0 { return true } else { return false } }),
              let origin = AuthSchemeMemory.origin(of: request.url)
        else { return try await run(make(request)) }
        let key = AuthSchemeMemory.Key(origin: origin, user: credentials.user)
        let sendsBody = hasBody || request.body != nil || ["PUT", "POST"].contains(request.method.uppercased())
        if authSchemes.lookup(key) == nil && sendsBody {
            // A HEAD cannot change anything nor download a file; its connection is not kept, as
            // a server may send a body with its 401 that a HEAD's reader leaves unread.
            let head = CurlRequest(method: "HEAD", url: request.url, options: [.forbidReuse])
            if let probe = try? await run(CurlTransfer(request: head, sink: .memory, options: options)) {
                if probe.response.status == 401, let challenge = probe.challenge {
                    authSchemes.learn(key, challenge: challenge)
                } else {
                    authSchemes.noteUnchallenged(key)
                }
            }
        }
        var sent = request
        if authSchemes.lookup(key) == .basic { sent.credentials?.scheme = .basic }
        let done = try await run(make(sent))
        if let challenge = done.challenge { authSchemes.learn(key, challenge: challenge) }
        return done
    }

    private func run(_ transfer: CurlTransfer) async throws -> CurlTransfer.Completed {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<CurlTransfer.Completed, Error>) in
                transfer.continuation = continuation
                loop.submit(.add(transfer))
            }
        } onCancel: {
            loop.submit(.cancel(transfer))
        }
    }
}
