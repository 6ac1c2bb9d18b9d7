import Curl
import FavFSCore
import Foundation

/// A new file uploaded while it is written: one PUT whose body is sent chunked from the cache
/// file as it grows. `If-None-Match: *` is checked by the server before the body, so a name
/// taken meanwhile costs no bytes; a stream given up halfway is a failed PUT, which Apache
/// mod_dav_fs (writing to a temp file, renamed in at the end) leaves no trace of. A server that
/// refuses chunked bodies (411, 501) is not asked again: its files upload at their close.
extension WebDAVProvider: StreamingUploadProvider {
    /// Below this a file goes in one plain PUT at its close.
    public var streamingThreshold: Int64 { 4 << 20 }

    public func uploadStreaming(_ id: ItemIdentifier, fd: Int32, content: GrowingContent) async throws -> Item {
        let path = id.rawValue
        if chunkedUploadsRefused.value {
            throw ProviderError(.notSupported, remote: remoteDescription, path: path,
                                detail: "the server takes no chunked PUT; the file is uploaded at its close")
        }
        let request = CurlRequest(method: "PUT", url: paths.url(for: id, isFolder: false),
                                  headers: [CurlHeader("If-None-Match", "*")], credentials: configuration.credentials)
        let response: CurlResponse
        do {
            response = try await transport.uploadGrowing(request, from: fd) { offset, wake in
                switch content.poll(offset: offset, wake: wake) {
                case .available(let upTo): return .available(upTo: upTo)
                case .ended: return .ended
                case .abandoned(let reason): return .abandoned(reason)
                case .wait: return .wait
                }
            }
        } catch {
            throw errors.transport(error, method: "PUT", path: path)
        }
        guard (200..<300).contains(response.status) else {
            // A server that wants a length first (nginx before 1.3.9, some appliances): once is enough.
            if response.status == 411 || response.status == 501 {
                chunkedUploadsRefused.set()
                log.info("the server refuses chunked uploads (\(response.status)): files are uploaded at their close",
                         metadata: ["remote": "\(remoteDescription)"])
            }
            throw errors.status(response.status, method: "PUT", path: path, body: response.body,
                                meaning: [409: .notFound, 412: .exists, 413: .tooLarge, 507: .noSpace])
        }
        let uploaded = Item(identifier: id, kind: .file, size: content.currentLength, version: response.headers["etag"])
        return await itemAfterChange(id, isFolder: false, fallback: uploaded, method: "PUT")
    }
}
