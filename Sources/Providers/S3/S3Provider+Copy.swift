import FavFSCore
import Foundation

/// Server-side copy: CopyObject (`PUT` with `x-amz-copy-source`), refused when the destination
/// exists (checked first, and by the server with `If-None-Match: *` where it honours it). One
/// CopyObject copies at most 5 GiB; larger files are copied through this machine (the core
/// asks `maxServerSideCopySize`; UploadPartCopy is not used).
extension S3Provider: ServerSideCopyProvider {
    public var maxServerSideCopySize: Int64? { 5 << 30 }

    public func copyItem(_ item: Item, to destination: ItemIdentifier) async throws -> Item {
        if try await folderExists(destination) {
            throw ProviderError(.exists, remote: remoteDescription, path: destination.rawValue, detail: "COPY refused: a folder is at the destination")
        }
        try await checkPrecondition(destination, .mustNotExist, method: "PUT (copy)")
        let copied = try await copyKey(addressing.fileKey(item.identifier), to: addressing.fileKey(destination),
                                       mustNotExist: true, path: item.identifier.rawValue)
        let fallback = Item(identifier: destination, kind: .file, size: item.size, modified: copied.modified, version: copied.etag)
        return await itemAfterChange(destination, fallback: fallback, method: "PUT (copy)")
    }
}
