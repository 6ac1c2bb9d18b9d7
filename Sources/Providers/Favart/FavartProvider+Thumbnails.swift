import Curl
import FavFSCore
import Foundation

/// Previews from `GET /preview?path=DIR&id=NAME`: a JPEG 120 px wide, made by the server.
extension FavartProvider: ThumbnailProvider {
    public func thumbnail(for item: Item) async throws -> Data {
        let path = item.identifier.rawValue
        guard item.kind == .file, !item.identifier.isRoot else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: path, detail: "folders have no preview")
        }
        let response: CurlResponse
        do {
            response = try await transport.perform(CurlRequest(method: "GET", url: urls.preview(item.identifier)))
        } catch {
            throw errors.transport(error, request: "GET /preview", path: path)
        }
        guard response.status == 200 else {
            throw errors.status(response.status, request: "GET /preview", path: path, body: response.body)
        }
        guard !response.body.isEmpty else {
            throw errors.invalid("an empty preview", request: "GET /preview", path: path, status: 200)
        }
        return response.body
    }
}
