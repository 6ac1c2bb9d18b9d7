import CFuse
import FavFSCore

/// A FUSE request handed to a Task: every request gets exactly one reply, also on error.
struct Request: @unchecked Sendable {
    let raw: fuse_req_t

    func fail(_ errno: Int32) { fuse_reply_err(raw, errno) }
    func fail(_ error: any Error) { fuse_reply_err(raw, ErrnoMapping.errno(for: error)) }
    func ok() { fuse_reply_err(raw, 0) }
}
