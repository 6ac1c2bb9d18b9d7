import CSMBClient
import FavFSCore
import Foundation

/// `cp` inside the mount: the server copies (SMB2 copy-chunk, which Samba and Windows answer),
/// into a hidden temporary name renamed into place once whole, under the name's claim, as an
/// upload is.
extension SMBProvider: ServerSideCopyProvider {
    public func copyItem(_ item: Item, to destination: ItemIdentifier) async throws -> Item {
        guard let parent = destination.parent, !destination.isRoot else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: destination.rawValue, detail: "cannot copy over the root folder")
        }
        if let problem = storageProblem(destination, kind: .file) { throw problem }
        let source = paths.url(item.identifier), target = paths.url(destination), errors = errors, remote = remoteDescription, paths = self.paths
        let temp = paths.url(parent.child(Self.temporaryPrefix + UUID().uuidString.prefix(8).lowercased()))
        let st: stat = try await connections.run { c in
            guard Self.stat(c, target).0 == nil else {
                throw ProviderError(.exists, remote: remote, path: destination.rawValue, detail: "cannot copy here: the name exists on the server")
            }
            guard let src = favfs_smb_open(c.handle, source, O_RDONLY, 0) else { throw errors.failure("copy (open the source)", item.identifier.rawValue, errno) }
            defer { _ = favfs_smb_close(c.handle, src) }
            var from = Glibc.stat()
            guard favfs_smb_fstat(c.handle, src, &from) == 0 else { throw errors.failure("copy (stat the source)", item.identifier.rawValue, errno) }
            guard let dst = favfs_smb_open(c.handle, temp, O_CREAT | O_EXCL | O_WRONLY, 0o644) else {
                throw errors.failure("copy (create the temporary file)", destination.rawValue, errno)
            }
            var copied: off_t = 0
            var failure: ProviderError?
            while copied < from.st_size {
                let n = favfs_smb_splice(c.handle, src, dst, from.st_size - copied)
                if n <= 0 { failure = errors.failure("copy at the server", destination.rawValue, n < 0 ? errno : EIO); break }
                copied += n
            }
            if favfs_smb_close(c.handle, dst) != 0 && failure == nil { failure = errors.failure("copy (close)", destination.rawValue, errno) }
            var claim: SMBClaim?
            if failure == nil {
                do { claim = try SMBClaim.take(c, folder: parent, name: destination.name, paths: paths, id: destination, remote: remote, errors: errors) }
                catch let e as ProviderError { failure = e }
            }
            defer { claim?.release(c) }
            if failure == nil, Self.stat(c, target).0 != nil {
                failure = ProviderError(.exists, remote: remote, path: destination.rawValue, detail: "cannot copy here: a file of this name was created on the server meanwhile")
            }
            if failure == nil, favfs_smb_rename(c.handle, temp, target) != 0 {
                failure = errors.failure("copy (rename into place)", destination.rawValue, errno)
            }
            if let failure {
                _ = favfs_smb_unlink(c.handle, temp)
                throw failure
            }
            let (now, err) = Self.stat(c, target)
            guard let now else { throw errors.failure("copy (stat after rename)", destination.rawValue, err) }
            return now
        }
        return self.item(destination, st)
    }
}
