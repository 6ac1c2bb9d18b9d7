import Curl
import FavFSCore
import Foundation

/// A new file uploaded while it is written: an upload session whose slices go as the file
/// grows, finished with `add` (`strict_conflict`, no autorename) once it is closed, so a name
/// taken meanwhile is refused as at any upload. A stream given up (or any failure) leaves the
/// session unfinished: Dropbox writes nothing and drops it, and the ordinary upload at close
/// follows. The result is checked against the file's `content_hash`.
extension DropboxProvider: StreamingUploadProvider {
    public var streamingThreshold: Int64 { max(1, configuration.streamingSliceSize) }

    public func uploadStreaming(_ id: ItemIdentifier, fd: Int32, content: GrowingContent) async throws -> Item {
        let path = id.rawValue
        guard !id.isRoot else { throw ProviderError(.isAFolder, remote: remoteDescription, path: path, detail: "the root is a folder") }
        if let problem = storageProblem(id, kind: .file) { throw problem }
        let slice = max(1, min(configuration.streamingSliceSize, 150 * 1024 * 1024))
        var session: String?
        var offset: Int64 = 0
        var total: Int64?
        while total == nil {
            switch await content.bytes(upTo: offset + slice) {
            case .available:
                // A full slice; the one that ends the file goes with `finish`.
                if let session {
                    try await appendToSession(session, fd: fd, offset: offset, length: slice, path: path)
                } else {
                    session = try await startSession(fd: fd, length: slice, path: path)
                }
                offset += slice
            case .ended(let length):
                total = length
            case .abandoned(let reason):
                throw ProviderError(.cancelled, remote: remoteDescription, path: path, detail: "streamed upload session given up: \(reason)")
            case .wait:
                continue
            }
        }
        let length = total ?? offset
        let open: String
        if let session { open = session } else { open = try await startSession(fd: fd, length: 0, path: path) }
        let commit: [String: Any] = ["path": paths.path(id), "mode": "add", "autorename": false, "mute": true, "strict_conflict": true]
        let route = "files/upload_session/finish"
        let response = try await finishSession(open, fd: fd, offset: offset, length: length - offset, commit: commit, path: path)
        guard response.status == 200 else { throw errors.status(response, route: route, path: path) }
        let stored = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["content_hash"] as? String
        let sent = try await BlockingWork.run { DropboxContentHash.of(fd: fd, length: length) }
        if let stored, let sent, stored != sent {
            throw ProviderError(.serverError, remote: remoteDescription, path: path, status: 200,
                                detail: "\(route): Dropbox stored content whose content_hash (\(stored)) is not the cached file's (\(sent)); the cached file stays and is uploaded again")
        }
        return try item(from: response.body, id: id, request: route)
    }
}
