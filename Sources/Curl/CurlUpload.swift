import CCurl
import Foundation

/// An upload body: `length` bytes of `fd` from `offset` (0 for a whole file; a multipart
/// upload's part starts further in), read with `pread` as curl asks for them. Nothing is loaded
/// into memory beyond curl's own upload buffer. With `growth`, the length is not known: the
/// body is sent chunked, as far as `growth` says the file has grown, and ends when it says so.
struct UploadSource: Sendable {
    let fd: Int32
    let length: Int64
    var offset: Int64 = 0
    var growth: UploadGrowthPoll? = nil
}

/// What a growing upload body (`CurlTransport.uploadGrowing`) holds at the offset curl reads.
public enum UploadGrowth: Sendable {
    /// Bytes up to this offset (exclusive) are in the file.
    case available(upTo: Int64)
    /// The body is complete.
    case ended
    /// Stop: the transfer fails with this reason.
    case abandoned(String)
    /// Nothing more yet: the transfer pauses until the `wake` given with the question is called.
    case wait
}

/// Asked on the transfer thread at each read: what is there from `offset`? A `.wait` answer
/// must keep `wake` and call it (from any thread, once) when that changes.
public typealias UploadGrowthPoll = @Sendable (_ offset: Int64, _ wake: @escaping @Sendable () -> Void) -> UploadGrowth

extension CurlTransfer {
    /// Sets the options that stream the body from the source fd. Returns the first failure.
    func configureUpload(_ easy: UnsafeMutableRawPointer, _ source: UploadSource,
                         context: UnsafeMutableRawPointer) -> (CURLcode, String)? {
        uploadOffset = 0
        // -1: the length is not known, so HTTP/1.1 sends the body chunked.
        let length = source.growth == nil ? curl_off_t(source.length) : -1
        let steps: [(CURLcode, String)] = [
            (favfs_easy_setopt_long(easy, CURLOPT_UPLOAD, 1), "UPLOAD"),
            (favfs_easy_setopt_off_t(easy, CURLOPT_INFILESIZE_LARGE, length), "INFILESIZE_LARGE"),
            // curl's default 64 KiB makes a read callback and a send per 64 KiB.
            (favfs_easy_setopt_long(easy, CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBufferSize), "UPLOAD_BUFFERSIZE"),
            (favfs_easy_setopt_data_cb(easy, CURLOPT_READFUNCTION, curlReadCallback), "READFUNCTION"),
            (favfs_easy_setopt_ptr(easy, CURLOPT_READDATA, context), "READDATA"),
            // Lets curl rewind and resend the body (after an auth challenge or a redirect).
            (favfs_easy_setopt_seek_cb(easy, CURLOPT_SEEKFUNCTION, curlSeekCallback), "SEEKFUNCTION"),
            (favfs_easy_setopt_ptr(easy, CURLOPT_SEEKDATA, context), "SEEKDATA"),
        ]
        return steps.first { $0.0 != CURLE_OK }
    }

    /// Fills curl's buffer from the source at the current offset (relative to `source.offset`). 0 ends the body; an abort ends
    /// the transfer with CURLE_ABORTED_BY_CALLBACK and the reason kept for the error.
    fileprivate func readChunk(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        guard let source = upload else { return 0 }
        if let growth = source.growth { return readGrowing(growth, source.fd, into: buffer, capacity: capacity) }
        let remaining = source.length - uploadOffset
        if remaining <= 0 { return 0 }
        let want = Int(min(Int64(capacity), remaining))
        while true {
            let n = pread(source.fd, buffer, want, off_t(source.offset + uploadOffset))
            if n < 0 {
                if errno == EINTR { continue }
                readErrno = errno
                return favfs_readfunc_abort
            }
            if n == 0 {
                // The file shrank under us: sending fewer bytes than announced would leave the
                // server waiting (or storing a short file), so stop here.
                readProblem = "the source ended at byte \(uploadOffset) of \(source.length)"
                return favfs_readfunc_abort
            }
            uploadOffset += Int64(n)
            countBytes?(Int64(n))
            return n
        }
    }

    /// A growing body: what `growth` says is there, a pause while it says wait.
    private func readGrowing(_ growth: UploadGrowthPoll, _ fd: Int32, into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let state = growth(uploadOffset) { [weak self] in
            guard let self else { return }
            self.loop?.submit(.resume(self))
        }
        switch state {
        case .ended:
            return 0
        case .abandoned(let reason):
            readProblem = reason
            return favfs_readfunc_abort
        case .wait:
            return favfs_readfunc_pause
        case .available(let upTo):
            let want = Int(min(Int64(capacity), upTo - uploadOffset))
            while true {
                let n = pread(fd, buffer, want, off_t(uploadOffset))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    if n < 0 { readErrno = errno } else { readProblem = "the source ended at byte \(uploadOffset), before the \(upTo) said to be there" }
                    return favfs_readfunc_abort
                }
                uploadOffset += Int64(n)
                countBytes?(Int64(n))
                return n
            }
        }
    }

    /// Bytes curl sends per read callback and write to the socket.
    static let uploadBufferSize = 512 * 1024

    fileprivate func seek(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, let source = upload, offset >= 0, source.growth != nil || offset <= source.length else { return favfs_seekfunc_fail }
        countBytes?(offset - uploadOffset)
        uploadOffset = offset
        return favfs_seekfunc_ok
    }

    /// The message of a transfer that failed because its source could not be read.
    func uploadFailureMessage(curlMessage: String) -> String {
        if let readProblem { return "reading the upload source failed: \(readProblem)" }
        let reason = readErrno.map { String(cString: strerror($0)) } ?? curlMessage
        return "reading the upload source failed at byte \(uploadOffset): \(reason)"
    }
}

private let curlReadCallback: favfs_curl_data_cb = { ptr, size, count, userdata in
    guard let ptr, let userdata else { return favfs_readfunc_abort }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.readChunk(into: ptr, capacity: size * count)
}

private let curlSeekCallback: favfs_curl_seek_cb = { userdata, offset, origin in
    guard let userdata else { return favfs_seekfunc_fail }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.seek(to: Int64(offset), origin: origin)
}
