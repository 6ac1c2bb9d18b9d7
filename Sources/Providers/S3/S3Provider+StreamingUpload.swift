import Curl
import FavFSCore
import Foundation

/// A new object uploaded while its file is written: a multipart upload whose parts are sent as
/// they fill (`partConcurrency` at a time), completed with `If-None-Match: *` once the file is
/// closed. A stream given up (or any failure) aborts the multipart upload, so nothing appears
/// under the key and no parts stay billed; the ordinary upload at close follows.
extension S3Provider: StreamingUploadProvider {
    /// A part's worth, and never below the size that would go in one PUT anyway.
    public var streamingThreshold: Int64 { max(configuration.multipartThreshold, configuration.partSize) }

    public func uploadStreaming(_ id: ItemIdentifier, fd: Int32, content: GrowingContent) async throws -> Item {
        let path = id.rawValue
        let key = addressing.fileKey(id)
        try await checkPrecondition(id, .mustNotExist, method: "PUT (multipart)")
        let uploadId = try await initiateMultipart(key: key, path: path)
        do {
            let (etags, length) = try await streamParts(key: key, uploadId: uploadId, fd: fd, content: content, path: path)
            try await checkPrecondition(id, .mustNotExist, method: "PUT (multipart)")
            let etag = try await complete(key: key, uploadId: uploadId, etags: etags, precondition: .mustNotExist, path: path)
            let uploaded = Item(identifier: id, kind: .file, size: length,
                                modified: Date().timeIntervalSince1970.rounded(.down), version: etag)
            return await itemAfterChange(id, fallback: uploaded, method: "POST (complete multipart)")
        } catch {
            await abort(key: key, uploadId: uploadId, path: path)
            throw error
        }
    }

    /// Sends each part once the file holds it (the last when the content ends); returns the
    /// parts' ETags in order and the content's length.
    private func streamParts(key: String, uploadId: String, fd: Int32, content: GrowingContent,
                             path: String) async throws -> (etags: [String], length: Int64) {
        let partSize = configuration.partSize
        let width = max(1, configuration.partConcurrency)
        var etags: [Int: String] = [:]
        var offset: Int64 = 0
        var ended = false
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            var running = 0
            while !ended {
                let length: Int64
                switch await content.bytes(upTo: offset + partSize) {
                case .available:
                    length = partSize
                case .ended(let total):
                    ended = true
                    length = total - offset
                    // S3 needs one part at least; past the first, an empty tail is no part.
                    if length == 0 && offset > 0 { continue }
                case .abandoned(let reason):
                    throw ProviderError(.cancelled, remote: remoteDescription, path: path,
                                        detail: "streamed multipart upload given up: \(reason)")
                case .wait:
                    continue
                }
                let number = etags.count + running + 1, start = offset
                offset += length
                group.addTask {
                    (number, try await self.uploadPart(key: key, uploadId: uploadId, number: number, fd: fd,
                                                       offset: start, length: length, path: path))
                }
                running += 1
                if running >= width, let (n, etag) = try await group.next() {
                    etags[n] = etag
                    running -= 1
                }
            }
            while let (n, etag) = try await group.next() { etags[n] = etag }
        }
        return ((1...max(1, etags.count)).map { etags[$0] ?? "" }, offset)
    }
}
