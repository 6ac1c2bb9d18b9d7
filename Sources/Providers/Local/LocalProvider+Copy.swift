import FavFSCore
import Foundation

/// Server-side copy for a local folder: the kernel's `copy_file_range` into a temp file beside
/// the destination (a reflink where the file system has them: btrfs, XFS), then `link` into
/// place, which fails if the name exists: an existing destination is never replaced.
extension LocalProvider: ServerSideCopyProvider {
    public func copyItem(_ item: Item, to destination: ItemIdentifier) async throws -> Item {
        let id = item.identifier
        guard let parent = destination.parent else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: "/", detail: "cannot copy to the root")
        }
        let input = open(path(id), O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw failure(id, "cannot open") }
        defer { close(input) }
        var st = stat()
        guard fstat(input, &st) == 0 else { throw failure(id, "cannot stat") }
        guard st.st_mode & S_IFMT == S_IFREG else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: id.rawValue, detail: "not a regular file")
        }
        let temp = path(parent) + "/.favfs-copy-\(UUID().uuidString.prefix(12))"
        let output = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw failure(destination, "cannot create the copy") }
        fchmod(output, st.st_mode & 0o7777)  // a copy has its source's mode, not the daemon's umask
        var linked = false
        defer { if !linked { unlink(temp) } }
        do {
            defer { close(output) }
            var done: Int64 = 0
            while done < Int64(st.st_size) {
                let n = FileCopy.chunk(input, output, at: done, max: Int(min(Int64(st.st_size) - done, 1 << 30)))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw failure(destination, "cannot copy")
                }
                if n == 0 { break }  // the source shrank meanwhile: the copy is what it had
                done += Int64(n)
            }
            guard fsync(output) == 0 else { throw failure(destination, "cannot sync the copy") }
        }
        guard link(temp, path(destination)) == 0 else {
            throw errno == EEXIST ? ProviderError(.exists, remote: remoteDescription, path: destination.rawValue, detail: "already exists")
                                  : failure(destination, "cannot create")
        }
        linked = true
        unlink(temp)
        return try await self.item(for: destination)
    }
}
