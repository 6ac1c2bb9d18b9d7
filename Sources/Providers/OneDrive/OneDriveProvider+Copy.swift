import Curl
import FavFSCore
import Foundation

/// `cp` inside the mount: Graph's `copy`, done by OneDrive without the bytes coming here. It is
/// asynchronous: 202 Accepted with a monitor URL (pre-authenticated) whose `status` is polled
/// until `completed` or `failed`, at most `copyWait` seconds. Never over an existing item
/// (`conflictBehavior=fail` → `.exists`).
extension OneDriveProvider: ServerSideCopyProvider {
    public func copyItem(_ item: Item, to destination: ItemIdentifier) async throws -> Item {
        let path = destination.rawValue
        guard let parent = destination.parent else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: path, detail: "cannot copy over the root folder")
        }
        if let problem = storageProblem(destination, kind: item.kind) { throw problem }
        let body: [String: Any] = ["parentReference": ["id": try await folderID(parent)], "name": destination.name]
        let url = paths.url(graph, item.identifier, "copy") + "?@microsoft.graph.conflictBehavior=fail"
        let response = try await client.call("POST", url, json: body, what: "POST copy", path: path)
        guard response.status == 202 else { throw errors.status(response, what: "POST copy", path: path) }
        guard let monitor = response.headers["location"], !monitor.isEmpty else {
            throw errors.invalid("202 Accepted without a monitor Location", request: "POST copy", path: path, status: 202)
        }
        try await waitForCopy(monitor, path: path)
        return try await self.item(for: destination)
    }

    /// Polls the monitor: every 0.2 s at first, then up to 2 s apart, for `copyWait` seconds.
    private func waitForCopy(_ monitor: String, path: String) async throws {
        let deadline = Date().addingTimeInterval(configuration.copyWait)
        var pause = 0.2
        while true {
            let response = try await client.sendUnauthenticated("GET copy monitor", path: path) {
                try await self.client.transport.perform(CurlRequest(url: monitor))
            }
            // The monitor sends the caller to the new item once it is there.
            if [302, 303].contains(response.status) { return }
            guard response.status == 200 || response.status == 202,
                  let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
                  let status = object["status"] as? String else {
                throw errors.status(response, what: "GET copy monitor", path: path)
            }
            switch status {
            case "completed":
                return
            case "failed", "cancelled":
                let codes = OneDriveErrors.codes(response.body)
                throw ProviderError(OneDriveErrors.kind(status: 500, codes: codes), remote: remoteDescription, path: path, status: response.status,
                                    detail: "OneDrive's copy \(status)\(OneDriveErrors.summary(response.body).map { ": " + $0 } ?? "")")
            default:
                guard Date() < deadline else {
                    throw ProviderError(.timedOut, remote: remoteDescription, path: path, status: response.status,
                                        detail: "OneDrive's copy was still \(status) after \(Int(configuration.copyWait)) s; it may still appear")
                }
                try await Task.sleep(nanoseconds: UInt64(pause * 1_000_000_000))
                pause = min(2, pause * 2)
            }
        }
    }
}
