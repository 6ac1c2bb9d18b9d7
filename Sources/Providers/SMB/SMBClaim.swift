import CSMBClient
import FavFSCore
import Foundation

/// The right to put a file in place under one name: a hidden file beside it, created with
/// `O_CREAT | O_EXCL`, which the server creates atomically for one client only.
///
/// Why not move the current file aside as the arbiter: an SMB2 rename is done on an open
/// handle, so two clients that both opened the file before either renamed it both "win" —
/// Samba moved the one file twice, both uploads went ahead, and one writer's edit was replaced
/// (`TwoWritersPerRemoteEndToEndTests`, smb). And libsmbclient's rename replaces an existing
/// target, so "the name is free" cannot be checked by the rename itself either. Every favfs
/// mount takes the claim before it checks the version and renames into place; another program
/// writing the share directly is not covered (that round trip's window stays).
///
/// A claim left by a client that died mid-upload: one of this host whose process is gone, or
/// one older than `staleAfter`, is removed and taken again once.
struct SMBClaim {
    let url: String

    static let staleAfter: TimeInterval = 180

    /// Takes the claim on `name` in `folder`. Throws `.locked` (retried by the core) while
    /// another client holds it.
    static func take(_ c: SMBContext, folder: ItemIdentifier, name: String, paths: SMBPaths,
                     id: ItemIdentifier, remote: String, errors: SMBErrors) throws -> SMBClaim {
        let url = paths.url(folder.child(fileName(for: name)))
        for attempt in 0..<2 {
            if let file = favfs_smb_open(c.handle, url, O_CREAT | O_EXCL | O_WRONLY, 0o644) {
                let owner = Array(Self.owner.utf8)
                _ = owner.withUnsafeBytes { favfs_smb_write(c.handle, file, $0.baseAddress!, $0.count) }
                _ = favfs_smb_close(c.handle, file)
                return SMBClaim(url: url)
            }
            let err = errno
            guard err == EEXIST else { throw errors.failure("upload (claim the name)", id.rawValue, err) }
            if attempt == 0, isStale(c, url) {
                _ = favfs_smb_unlink(c.handle, url)
                continue
            }
            break
        }
        throw ProviderError(.locked, remote: remote, path: id.rawValue,
                            detail: "another client is replacing this file right now (its claim \(SMBProvider.temporaryPrefix)claim-… is in the folder); tried again shortly")
    }

    /// The claim's hidden name beside `name` (a hash: `name` may already be as long as a name
    /// can be). Names compare without case on SMB: "A.txt" and "a.txt" are one file.
    static func fileName(for name: String) -> String {
        SMBProvider.temporaryPrefix + "claim-" + SHA256.hex(SHA256.digest(Array(name.lowercased().utf8)).prefix(12))
    }

    /// Gives the claim up.
    func release(_ c: SMBContext) { _ = favfs_smb_unlink(c.handle, url) }

    /// "host pid", written into a claim so this host can tell its own dead claims.
    private static let owner: String = {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, 255)
        return "\(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) \(getpid())"
    }()

    private static func isStale(_ c: SMBContext, _ url: String) -> Bool {
        var st = Glibc.stat()
        guard favfs_smb_stat(c.handle, url, &st) == 0 else { return false }
        if Date().timeIntervalSince1970 - TimeInterval(st.st_mtim.tv_sec) > staleAfter { return true }
        guard let file = favfs_smb_open(c.handle, url, O_RDONLY, 0) else { return false }
        defer { _ = favfs_smb_close(c.handle, file) }
        var buffer = [UInt8](repeating: 0, count: 300)
        let n = buffer.withUnsafeMutableBytes { favfs_smb_read(c.handle, file, $0.baseAddress!, $0.count) }
        guard n > 0 else { return false }
        let parts = String(decoding: buffer[..<n], as: UTF8.self).split(separator: " ")
        let mine = owner.split(separator: " ")
        guard parts.count == 2, parts[0] == mine[0], let pid = Int32(parts[1]) else { return false }
        // This host's claim: stale once its process is gone (a crash mid-upload).
        return pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
    }
}
