import CCurl
import Foundation

/// An upload body: `length` bytes of `fd` from `offset` (0 for a whole file; a multipart
/// upload's part starts further in), read with `pread` as curl asks for them. Nothing is loaded
/// into memory beyond curl's own upload buffer.
struct UploadSource: Sendable {
    let fd: Int32
    let length: Int64
    var offset: Int64 = 0
}

extension CurlTransfer {
    /// Sets the options that stream the body from the source fd. Returns the first failure.
    func configureUpload(_ easy: UnsafeMutableRawPointer, _ source: UploadSource,
                         context: UnsafeMutableRawPointer) -> (CURLcode, String)? {
        uploadOffset = 0
        let steps: [(CURLcode, String)] = [
            (favfs_easy_setopt_long(easy, CURLOPT_UPLOAD, 1), "UPLOAD"),
            (favfs_easy_setopt_off_t(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(source.length)), "INFILESIZE_LARGE"),
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

    fileprivate func seek(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, let source = upload, offset >= 0, offset <= source.length else { return favfs_seekfunc_fail }
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
