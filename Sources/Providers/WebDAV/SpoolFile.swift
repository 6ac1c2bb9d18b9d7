import Foundation
import FavFSCore

/// A temp file a response body is written to and read back from as it arrives
/// (`SpoolFollower`), so large bodies (listings) stay out of memory. Unlinked at once: nothing
/// is left behind, even on a crash.
struct SpoolFile: Sendable {
    let fd: Int32

    init(remote: String, path: String) throws {
        var template = Array((NSTemporaryDirectory() + "/favfs-spool-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw ProviderError(.localIO, remote: remote, path: path,
                                detail: "cannot create a temp file for the response: \(String(cString: strerror(errno)))")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.fd = fd
    }

    func close() { _ = Glibc.close(fd) }
}
