import Foundation
import CFuse
import FavFSCore

/// copy_file_range (what `cp` calls after its FICLONE ioctl is refused): a whole-file copy into
/// a new file becomes a copy at the remote (`Domain.copyRange`); anything else is answered
/// EOPNOTSUPP, on which the kernel copies through reads and writes itself, for this call only.
/// Never ENOSYS: the kernel would stop sending copies for the rest of the mount.
extension Bridge {
    func copyFileRange(_ req: Request, _ offsetIn: Int64, _ fhIn: UInt64, _ offsetOut: Int64, _ fhOut: UInt64,
                       _ length: Int, _ flags: Int32) {
        if flags != 0 { return req.fail(EINVAL) }
        deadline(req, "copy_file_range")
        Task {
            do {
                switch try await domain.copyRange(from: fhIn, offset: offsetIn, to: fhOut, offset: offsetOut, length: Int64(clamping: length)) {
                case .copied(let n):
                    req.reply { fuse_reply_write($0, Int(n)) }
                case .fallBack(let why):
                    log.debug("copy_file_range: through this machine: \(why)")
                    req.fail(EOPNOTSUPP)
                }
            } catch {
                log.info("copy_file_range: \(error)")
                let code = ErrnoMapping.errno(for: error)
                req.fail(code == ENOSYS ? EOPNOTSUPP : code)
            }
        }
    }

    /// A write into a file made by a server-side copy: the copy's content is fetched (in a Task,
    /// not on this libfuse thread), then the write lands like any other.
    func writeAfterFetching(_ req: Request, _ data: Data, _ offset: Int64, _ fh: UInt64) {
        deadline(req, "write")
        Task {
            do {
                try await domain.prepareForWriting(handle: fh)
                let n = try data.withUnsafeBytes { try domain.write(handle: fh, offset: offset, $0) }
                req.reply { fuse_reply_write($0, n) }
            } catch {
                log.warning("write: \(error)")
                req.fail(error)
            }
        }
    }
}
