import Curl
import FavFSCore
import Foundation

/// `cp` inside the mount: `copy_v2`, done by Dropbox without the bytes coming here. Dropbox
/// never copies over an existing item (`to/conflict` → `.exists`).
extension DropboxProvider: ServerSideCopyProvider {
    public func copyItem(_ item: Item, to destination: ItemIdentifier) async throws -> Item {
        let path = destination.rawValue
        guard !destination.isRoot else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: path, detail: "cannot copy over the root folder")
        }
        if let problem = storageProblem(destination, kind: item.kind) { throw problem }
        let argument: [String: Any] = ["from_path": paths.path(item.identifier), "to_path": paths.path(destination), "autorename": false]
        let response = try await client.rpc("files/copy_v2", argument, path: path)
        guard response.status == 200 else { throw errors.status(response, route: "files/copy_v2", path: path) }
        return try self.item(from: response.body, id: destination, request: "files/copy_v2")
    }
}
