import Curl
import FavFSCore
import Foundation

/// Previews from Graph's `thumbnails/0/c128x128/content`: a JPEG scaled into 128 × 128 (the
/// freedesktop "normal" size), made by OneDrive, so a folder of photos gets its thumbnails
/// without downloading one photo. Graph answers 302 to a pre-authenticated URL, fetched
/// without the `Authorization` header.
extension OneDriveProvider: ThumbnailProvider {
    public func thumbnail(for item: Item) async throws -> Data {
        let path = item.identifier.rawValue
        guard item.kind == .file, !item.identifier.isRoot else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: path, detail: "folders have no preview")
        }
        let what = "GET thumbnail"
        var response = try await client.call("GET", paths.url(graph, item.identifier, "thumbnails/0/c128x128/content"), what: what, path: path)
        if [301, 302, 303, 307, 308].contains(response.status) {
            guard let location = response.headers["location"], !location.isEmpty else {
                throw errors.invalid("a redirect without a Location", request: what, path: path, status: response.status)
            }
            response = try await client.sendUnauthenticated("GET the thumbnail URL", path: path) {
                try await self.client.transport.perform(CurlRequest(method: "GET", url: location))
            }
        }
        guard response.status == 200 else {
            if response.status == 404 {
                // No thumbnail: not an image OneDrive previews (or the file is gone: the listing says).
                throw ProviderError(.notSupported, remote: remoteDescription, path: path, status: 404,
                                    detail: "\(what): OneDrive has no preview of this file")
            }
            throw errors.status(response, what: what, path: path)
        }
        guard !response.body.isEmpty else { throw errors.invalid("an empty preview", request: what, path: path, status: 200) }
        return response.body
    }
}
