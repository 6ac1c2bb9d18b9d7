import Curl
import FavFSCore
import Foundation

/// Previews from `files/get_thumbnail_v2`: a JPEG scaled into 128 × 128 (the freedesktop
/// "normal" size), made by Dropbox from the file's current revision, so a folder of photos
/// gets its thumbnails without downloading one photo.
extension DropboxProvider: ThumbnailProvider {
    public func thumbnail(for item: Item) async throws -> Data {
        let path = item.identifier.rawValue
        guard item.kind == .file, !item.identifier.isRoot else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: path, detail: "folders have no preview")
        }
        let route = "files/get_thumbnail_v2"
        let argument: [String: Any] = ["resource": [".tag": "path", "path": paths.path(item.identifier)],
                                       "format": "jpeg", "size": "w128h128", "mode": "bestfit"]
        let response = try await client.send(route, path: path) { token in
            try await self.client.transport.perform(self.client.contentRequest(route, argument, token: token))
        }
        guard response.status == 200 else {
            var error = errors.status(response, route: route, path: path)
            let tags = Set(DropboxErrors.tags(response.body))
            if !tags.isDisjoint(with: ["unsupported_extension", "unsupported_image", "conversion_error"]) {
                // Not an image Dropbox can preview: no preview, rather than a server failure.
                error = ProviderError(.notSupported, remote: remoteDescription, path: path, status: response.status,
                                      detail: "\(route): Dropbox makes no preview of this file (\(DropboxErrors.summary(response.body) ?? "unsupported"))")
            }
            throw error
        }
        guard !response.body.isEmpty else {
            throw errors.invalid("an empty preview", request: route, path: path, status: 200)
        }
        return response.body
    }
}
