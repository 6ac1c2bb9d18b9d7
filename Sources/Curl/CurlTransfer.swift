import CCurl
import Foundation

/// One request in flight: its easy-handle setup, the header and body callbacks, and the result.
/// Created by the caller; after `submit` only the loop thread touches it.
final class CurlTransfer: @unchecked Sendable {
    /// Where a download's first byte goes.
    enum Placement {
        case fixed(Int64)
        /// 206 → the start in Content-Range; 200 → 0 (the whole content).
        case followResponse(requestedStart: Int64)
    }

    enum Sink {
        case memory
        case file(fd: Int32, placement: Placement)
    }

    struct Completed: Sendable {
        var response: CurlResponse
        var writtenAt: Int64
        /// The `WWW-Authenticate` challenge of a 401 seen on the way (also one libcurl answered).
        var challenge: String?
    }

    let request: CurlRequest
    let sink: Sink
    /// The body streamed from a file descriptor (`upload`), instead of `request.body`.
    let upload: UploadSource?
    let options: TransportOptions
    var continuation: CheckedContinuation<Completed, Error>?
    /// Told the file range written so far after each body write (downloads only).
    var progress: (@Sendable (Range<Int64>) -> Void)?

    private(set) var easy: UnsafeMutableRawPointer?
    /// The loop driving this transfer (set when added): a paused upload is resumed through it.
    weak var loop: CurlLoop?
    private(set) var isFinished = false
    var cancelRequested = false

    // Response state, rebuilt for each response curl reads (redirects, auth retries).
    private var status = 0
    private var headers: [String: String] = [:]
    private var body = Data()
    private var bytesWritten: Int64 = 0
    /// The last 401's `WWW-Authenticate` headers, kept across responses (see `AuthSchemeMemory`).
    private var challenge: String?
    /// Non-HTTP (FTP): the raw control-connection replies, kept across responses.
    private var replyLines: [String] = []
    /// File offset of the first body byte; decided at the first body chunk of a 2xx response.
    private var writeStart: Int64?
    /// Gathers a file sink's body into larger writes (created at the first body byte).
    private var writer: FileWriter?
    private var writeErrno: Int32?
    private var placementError: String?
    /// The in-memory body passed `request.maxBodyBytes`.
    private var bodyTooLarge = false

    // Upload state (loop thread): where the next read callback reads, and why reading stopped.
    var uploadOffset: Int64 = 0
    var readErrno: Int32?
    var readProblem: String?

    // C memory that must outlive the transfer.
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// QUOTE/POSTQUOTE lists from `request.options`.
    private var extraLists: [UnsafeMutablePointer<curl_slist>?] = []
    private var postData: UnsafeMutablePointer<CChar>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The SSH host key verdict and the key offered, for sftp:// and scp:// (see shim.h).
    private let sshKeyReport: UnsafeMutablePointer<favfs_ssh_key_report>
    /// Told of body bytes as they move (`CurlByteCounting`); a rewind is told as a negative count.
    let countBytes: (@Sendable (Int64) -> Void)?

    init(request: CurlRequest, sink: Sink, options: TransportOptions, upload: UploadSource? = nil) {
        countBytes = CurlByteCounting.current()
        self.request = request
        isFTP = request.url.lowercased().hasPrefix("ftp")
        self.sink = sink
        self.upload = upload
        self.options = options
        errorBuffer = .allocate(capacity: Int(favfs_error_size))
        errorBuffer.initialize(repeating: 0, count: Int(favfs_error_size))
        sshKeyReport = .allocate(capacity: 1)
        sshKeyReport.initialize(to: favfs_ssh_key_report())
        sshKeyReport.pointee.verdict = -1
    }

    deinit {
        curl_slist_free_all(headerList)
        for list in extraLists { curl_slist_free_all(list) }
        postData?.deallocate()
        errorBuffer.deallocate()
        sshKeyReport.deallocate()
    }

    /// HTTP(S) responses have statuses; FTP and SFTP bodies always go to the sink.
    var isHTTP: Bool {
        let url = request.url.lowercased()
        return url.hasPrefix("http://") || url.hasPrefix("https://")
    }

    /// SSH URLs: the host key is checked against CURLOPT_SSH_KNOWNHOSTS (when set), with a verdict.
    var isSSH: Bool {
        let url = request.url.lowercased()
        return url.hasPrefix("sftp://") || url.hasPrefix("scp://")
    }

    /// The URL for messages: the userinfo part (`user:pass@`) removed.
    var safeURL: String { Self.stripCredentials(request.url) }
    /// An FTP or FTPS transfer (see the loop's wait in CurlLoop.run).
    let isFTP: Bool

    static func stripCredentials(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<scheme.upperBound]) + String(rest[rest.index(after: at)...])
    }

    // MARK: setup

    /// Sets every option on a freshly reset easy handle. Returns an error for a bad option value.
    func configure(_ easy: UnsafeMutableRawPointer) -> TransportError? {
        self.easy = easy
        var failed: (CURLcode, String)?
        func check(_ code: CURLcode, _ what: String) {
            if code != CURLE_OK && failed == nil { failed = (code, what) }
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        check(favfs_easy_setopt_string(easy, CURLOPT_URL, request.url), "URL")
        check(favfs_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
        check(favfs_easy_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer), "ERRORBUFFER")
        check(favfs_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(options.connectTimeout * 1000)), "CONNECTTIMEOUT_MS")
        check(favfs_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, options.lowSpeedLimit), "LOW_SPEED_LIMIT")
        check(favfs_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, options.lowSpeedTime), "LOW_SPEED_TIME")
        check(favfs_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1), "TCP_KEEPALIVE")
        check(favfs_easy_setopt_string(easy, CURLOPT_USERAGENT, options.userAgent), "USERAGENT")
        // Bytes are stored as the server sent them: no Accept-Encoding, no decoding.
        check(favfs_easy_setopt_long(easy, CURLOPT_HTTP_CONTENT_DECODING, 0), "HTTP_CONTENT_DECODING")
        check(favfs_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, 128 * 1024), "BUFFERSIZE")
        check(favfs_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, options.verifyTLS ? 1 : 0), "SSL_VERIFYPEER")
        check(favfs_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, options.verifyTLS ? 2 : 0), "SSL_VERIFYHOST")

        for option in request.options {
            if let (code, what) = apply(option, easy) { check(code, what) }
        }
        if isSSH {
            // Same acceptance as libcurl's default (known keys only), but the verdict is kept.
            sshKeyReport.pointee.verdict = -1
            sshKeyReport.pointee.length = 0
            check(favfs_easy_setopt_ssh_keyfunc(easy, sshKeyReport), "SSH_KEYFUNCTION")
        }

        let method = request.method.uppercased()
        if !isHTTP {
            // FTP/SFTP: the method is not a request line; options say what to do.
        } else if method == "HEAD" {
            check(favfs_easy_setopt_long(easy, CURLOPT_NOBODY, 1), "NOBODY")
        } else if method != "GET" {
            check(favfs_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method), "CUSTOMREQUEST")
        }

        let signsAWS = request.options.contains { if case .awsSigV4 = $0 { return true } else { return false } }
        var headerLines = request.headers.map { "\($0.name): \($0.value)" }
        if let upload {
            if let (code, what) = configureUpload(easy, upload, context: me) { check(code, what) }
        } else if isHTTP && (request.body != nil || method == "PUT" || method == "POST") {
            let data = request.body ?? Data()
            // curl does not copy POSTFIELDS; the buffer lives as long as the transfer. POSTFIELDS
            // (rather than a read callback) lets curl resend the body after an auth challenge.
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, data.count))
            data.withUnsafeBytes { raw in
                if let base = raw.baseAddress { memcpy(buffer, base, data.count) }
            }
            postData = buffer
            check(favfs_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(data.count)), "POSTFIELDSIZE_LARGE")
            check(favfs_easy_setopt_ptr(easy, CURLOPT_POSTFIELDS, buffer), "POSTFIELDS")
            // POSTFIELDS implies a form Content-Type; drop it unless the caller set one (SigV4
            // callers must set one: the empty removal line would be signed, see "Expect:").
            if !request.headers.contains(where: { $0.name.lowercased() == "content-type" }) && !signsAWS {
                headerLines.append("Content-Type:")
            }
        }
        // No 100-continue round trip: servers are trusted to answer (a refused upload costs one
        // body's worth of bytes, which the precondition headers make rare). Not for SigV4:
        // libcurl 7.88 signs every custom header line, also an empty "Expect:" that only removes
        // a header, so the server would miss a signed header (SignatureDoesNotMatch). There
        // curl's own Expect: 100-continue (bodies above 1 MiB) stays, which S3 answers.
        if !signsAWS { headerLines.append("Expect:") }
        for line in headerLines {
            headerList = curl_slist_append(headerList, line)
        }
        check(favfs_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList), "HTTPHEADER")

        if let credentials = request.credentials {
            check(favfs_easy_setopt_string(easy, CURLOPT_USERNAME, credentials.user), "USERNAME")
            check(favfs_easy_setopt_string(easy, CURLOPT_PASSWORD, credentials.password), "PASSWORD")
            let auth: Int
            switch credentials.scheme {
            case .any: auth = favfs_auth_any
            case .basic: auth = favfs_auth_basic
            case .digest: auth = favfs_auth_digest
            }
            // CURLOPT_AWS_SIGV4 selects its own auth scheme; CURLOPT_HTTPAUTH would replace it
            // (with "any", curl waits for a 401 challenge S3 never sends, and signs nothing).
            if !signsAWS {
                check(favfs_easy_setopt_long(easy, CURLOPT_HTTPAUTH, auth), "HTTPAUTH")
            }
        }

        check(favfs_easy_setopt_data_cb(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback), "HEADERFUNCTION")
        check(favfs_easy_setopt_ptr(easy, CURLOPT_HEADERDATA, me), "HEADERDATA")
        check(favfs_easy_setopt_data_cb(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback), "WRITEFUNCTION")
        check(favfs_easy_setopt_ptr(easy, CURLOPT_WRITEDATA, me), "WRITEDATA")

        if let (code, what) = failed {
            return TransportError(kind: .other, code: Int(code.rawValue),
                                  message: "setting \(what): \(String(cString: curl_easy_strerror(code)))", url: safeURL)
        }
        return nil
    }

    func detachEasy() { easy = nil }

    /// Sets one `CurlOption`; returns the failure, if any.
    private func apply(_ option: CurlOption, _ easy: UnsafeMutableRawPointer) -> (CURLcode, String)? {
        func long(_ o: CURLoption, _ v: Int, _ what: String) -> (CURLcode, String)? {
            let c = favfs_easy_setopt_long(easy, o, v); return c == CURLE_OK ? nil : (c, what)
        }
        func string(_ o: CURLoption, _ v: String, _ what: String) -> (CURLcode, String)? {
            let c = favfs_easy_setopt_string(easy, o, v); return c == CURLE_OK ? nil : (c, what)
        }
        func list(_ o: CURLoption, _ lines: [String], _ what: String) -> (CURLcode, String)? {
            var l: UnsafeMutablePointer<curl_slist>? = nil
            for line in lines { l = curl_slist_append(l, line) }
            extraLists.append(l)
            let c = favfs_easy_setopt_slist(easy, o, l); return c == CURLE_OK ? nil : (c, what)
        }
        switch option {
        case .range(let r): return string(CURLOPT_RANGE, r, "RANGE")
        case .quote(let q): return list(CURLOPT_QUOTE, q, "QUOTE")
        case .postQuote(let q): return list(CURLOPT_POSTQUOTE, q, "POSTQUOTE")
        case .noBody: return long(CURLOPT_NOBODY, 1, "NOBODY")
        case .fileTime: return long(CURLOPT_FILETIME, 1, "FILETIME")
        case .dirListOnly: return long(CURLOPT_DIRLISTONLY, 1, "DIRLISTONLY")
        case .customRequest(let r): return string(CURLOPT_CUSTOMREQUEST, r, "CUSTOMREQUEST")
        case .useSSL(let level): return long(CURLOPT_USE_SSL, level.rawValue, "USE_SSL")
        case .tlsAtMost12: return long(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2) | Int(CURL_SSLVERSION_MAX_TLSv1_2), "SSLVERSION")
        case .ftpSkipPasvIP(let v): return long(CURLOPT_FTP_SKIP_PASV_IP, v ? 1 : 0, "FTP_SKIP_PASV_IP")
        case .ftpFileMethod(let v): return long(CURLOPT_FTP_FILEMETHOD, v, "FTP_FILEMETHOD")
        case .sshKnownHosts(let f): return string(CURLOPT_SSH_KNOWNHOSTS, f, "SSH_KNOWNHOSTS")
        case .sshPrivateKeyFile(let f): return string(CURLOPT_SSH_PRIVATE_KEYFILE, f, "SSH_PRIVATE_KEYFILE")
        case .keyPassword(let p): return string(CURLOPT_KEYPASSWD, p, "KEYPASSWD")
        case .sshAuthTypes(let t): return long(CURLOPT_SSH_AUTH_TYPES, t, "SSH_AUTH_TYPES")
        case .newFilePermissions(let p): return long(CURLOPT_NEW_FILE_PERMS, p, "NEW_FILE_PERMS")
        case .awsSigV4(let s): return string(CURLOPT_AWS_SIGV4, s, "AWS_SIGV4")
        case .caInfo(let f): return string(CURLOPT_CAINFO, f, "CAINFO")
        case .forbidReuse: return long(CURLOPT_FORBID_REUSE, 1, "FORBID_REUSE")
        case .timeout(let s): return long(CURLOPT_TIMEOUT_MS, Int(s * 1000), "TIMEOUT_MS")
        case .lowSpeedTime(let s): return long(CURLOPT_LOW_SPEED_TIME, s, "LOW_SPEED_TIME")
        case .ignoreContentLength: return long(CURLOPT_IGNORE_CONTENT_LENGTH, 1, "IGNORE_CONTENT_LENGTH")
        case .tcpKeepAlive(let s):
            return long(CURLOPT_TCP_KEEPALIVE, 1, "TCP_KEEPALIVE") ?? long(CURLOPT_TCP_KEEPIDLE, s, "TCP_KEEPIDLE")
                ?? long(CURLOPT_TCP_KEEPINTVL, s, "TCP_KEEPINTVL")
        }
    }

    // MARK: callbacks (loop thread)

    fileprivate func headerLine(_ line: String) {
        if !isHTTP && replyLines.count < Self.maxReplyLines {
            var text = Substring(line)
            while text.last?.isNewline == true { text = text.dropLast() }
            replyLines.append(String(text))
        }
        if line.hasPrefix("HTTP/") {
            // A new response starts (after a redirect, auth challenge or 100 Continue): only the
            // final one counts.
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            headers = [:]
            body = Data()
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = Self.trimmed(line[..<colon]).lowercased()
        let value = String(Self.trimmed(line[line.index(after: colon)...]))
        if let old = headers[name] { headers[name] = old + ", " + value } else { headers[name] = value }
        if status == 401 && name == "www-authenticate" { challenge = headers[name] }
    }

    /// `text` without the spaces, tabs and line ends HTTP allows around a header's name and
    /// value (Foundation's `trimmingCharacters` was 3% of favfs's CPU copying small files).
    static func trimmed(_ text: Substring) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        guard let first = text.firstIndex(where: { !blank($0) }), let last = text.lastIndex(where: { !blank($0) }) else { return "" }
        return text[first...last]
    }

    /// Returns the number of bytes consumed; anything else makes curl abort with a write error.
    fileprivate func bodyChunk(_ chunk: UnsafeRawBufferPointer) -> Int {
        guard case let .file(fd, placement) = sink, !isHTTP || (200..<300).contains(status) else {
            if let limit = request.maxBodyBytes, body.count + chunk.count > limit {
                bodyTooLarge = true
                return 0
            }
            body.append(contentsOf: chunk)
            return chunk.count
        }
        if writeStart == nil {
            switch placement {
            case .fixed(let offset): writeStart = offset
            case .followResponse(let requested):
                if status == 206 {
                    guard let start = Self.contentRangeStart(headers["content-range"]) else {
                        placementError = "206 without a usable Content-Range (\(headers["content-range"] ?? "none"))"
                        return 0
                    }
                    writeStart = start
                } else {
                    writeStart = status == 200 ? 0 : requested
                }
            }
        }
        if writer == nil { writer = FileWriter(fd: fd, start: writeStart!) }
        let before = writer!.flushed
        if let e = writer!.write(chunk) { writeErrno = e; return 0 }
        reportWritten(since: before)
        return chunk.count
    }

    /// Writes what the file writer still holds (at the end of the transfer); false on failure.
    private func flushFile() -> Bool {
        guard let writer else { return true }
        let before = writer.flushed
        if let e = writer.flush() { writeErrno = e; return false }
        reportWritten(since: before)
        return true
    }

    private func reportWritten(since before: Int64) {
        guard let writer, writer.flushed > before else { return }
        countBytes?(writer.flushed - before)
        bytesWritten = writer.flushed
        progress?(writer.start..<(writer.start + writer.flushed))
    }

    /// A bound on kept FTP reply lines (a FEAT or MLST reply is a few dozen).
    static let maxReplyLines = 10_000

    /// `bytes 100-199/1000` → 100.
    static func contentRangeStart(_ value: String?) -> Int64? {
        guard let value, let unitEnd = value.firstIndex(of: " "),
              value[..<unitEnd].lowercased() == "bytes" else { return nil }
        let spec = value[value.index(after: unitEnd)...].trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        return Int64(spec[..<dash])
    }

    // MARK: completion (loop thread)

    func result(code: CURLcode) -> Result<Completed, Error> {
        // Bytes still gathered belong in the file whatever the outcome (a failed transfer's
        // bytes so far are as good as any).
        if !flushFile() && code == CURLE_OK {
            return .failure(TransportError(kind: .writeFailed, code: Int(CURLE_WRITE_ERROR.rawValue),
                                           message: "cannot write the download: \(String(cString: strerror(writeErrno ?? EIO)))",
                                           url: safeURL, errno: writeErrno))
        }
        if code == CURLE_OK {
            var responseCode = 0
            if let easy { favfs_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &responseCode) }
            var response = CurlResponse(status: responseCode != 0 ? responseCode : status, headers: headers,
                                        body: body, bytesWritten: bytesWritten)
            response.replyLines = replyLines
            if let easy {
                var fileTime: curl_off_t = -1
                if favfs_easy_getinfo_off_t(easy, CURLINFO_FILETIME_T, &fileTime) == CURLE_OK, fileTime >= 0 {
                    response.fileTime = Int64(fileTime)
                }
                var length: curl_off_t = -1
                if favfs_easy_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK, length >= 0 {
                    response.contentLength = Int64(length)
                }
            }
            return .success(Completed(response: response, writtenAt: writeStart ?? placementStartGuess, challenge: challenge))
        }
        let buffered = String(cString: errorBuffer)
        var message = buffered.isEmpty ? String(cString: curl_easy_strerror(code)) : buffered
        if let placementError { message = placementError }
        if bodyTooLarge { message = "the answer is longer than the \(request.maxBodyBytes ?? 0) bytes expected of it" }
        if readErrno != nil || readProblem != nil {
            var error = TransportError(kind: .readFailed, code: Int(code.rawValue),
                                       message: uploadFailureMessage(curlMessage: message), url: safeURL, errno: readErrno)
            error.replyLines = replyLines
            return .failure(error)
        }
        if let writeErrno { message += ": " + String(cString: strerror(writeErrno)) }
        let kind: TransportError.Kind = bodyTooLarge ? .bodyTooLarge : placementError != nil ? .other : CurlErrorMapping.kind(code)
        var error = TransportError(kind: kind, code: Int(code.rawValue), message: message,
                                   url: safeURL, errno: code == CURLE_WRITE_ERROR ? writeErrno : nil)
        error.replyLines = replyLines
        if isSSH && code == CURLE_PEER_FAILED_VERIFICATION {
            switch sshKeyReport.pointee.verdict {
            case favfs_khmatch_missing: error.sshHostKey = .unknown
            case favfs_khmatch_mismatch: error.sshHostKey = .changed
            default: break
            }
            let length = min(Int(sshKeyReport.pointee.length), 4096)
            if length > 0 {
                error.sshOfferedKey = withUnsafeBytes(of: &sshKeyReport.pointee.key) { Array($0.prefix(length)) }
            }
        }
        return .failure(error)
    }

    private var placementStartGuess: Int64 {
        guard case let .file(_, placement) = sink else { return 0 }
        switch placement {
        case .fixed(let o): return o
        case .followResponse(let requested): return status == 200 ? 0 : requested
        }
    }

    func finish(_ result: Result<Completed, Error>) {
        guard !isFinished else { return }
        isFinished = true
        let c = continuation
        continuation = nil
        c?.resume(with: result)
    }

    func finishCancelled() {
        finish(.failure(TransportError(kind: .cancelled, code: Int(CURLE_ABORTED_BY_CALLBACK.rawValue),
                                       message: "cancelled", url: safeURL)))
    }
}

private let curlHeaderCallback: favfs_curl_data_cb = { ptr, size, count, userdata in
    let n = size * count
    guard let ptr, let userdata else { return n }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let line = String(decoding: UnsafeRawBufferPointer(start: ptr, count: n), as: UTF8.self)
    transfer.headerLine(line)
    return n
}

private let curlWriteCallback: favfs_curl_data_cb = { ptr, size, count, userdata in
    let n = size * count
    guard let ptr, let userdata else { return n }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.bodyChunk(UnsafeRawBufferPointer(start: ptr, count: n))
}
