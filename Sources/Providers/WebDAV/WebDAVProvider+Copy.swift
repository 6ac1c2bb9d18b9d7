import Curl
import FavFSCore
import Foundation

/// Server-side copy: `COPY` with `Depth: 0`, an absolute `Destination` and `Overwrite: F`, so
/// an existing destination is refused (412), never replaced. The server copies what it has at
/// the source URL now.
extension WebDAVProvider: ServerSideCopyProvider {
    public func copyItem(_ item: Item, to destination: ItemIdentifier) async throws -> Item {
        let path = item.identifier.rawValue
        let request = CurlRequest(method: "COPY", url: paths.url(for: item.identifier, isFolder: false),
                                  headers: [CurlHeader("Destination", paths.url(for: destination, isFolder: false)),
                                            CurlHeader("Overwrite", "F"), CurlHeader("Depth", "0")],
                                  credentials: configuration.credentials)
        let response: CurlResponse
        do {
            response = try await transport.perform(request)
        } catch {
            throw errors.transport(error, method: "COPY", path: path)
        }
        guard (200..<300).contains(response.status) else {
            // 412: the destination exists; 409: its parent is missing; 502: another server;
            // 405/501: no COPY here.
            let error = errors.status(response.status, method: "COPY", path: path, body: response.body,
                                      meaning: [412: .exists, 409: .notFound, 502: .crossDevice, 507: .noSpace])
            throw await diagnose(error, target: destination, targetMustNotExist: true)
        }
        var copied = item
        copied.identifier = destination
        copied.version = nil
        do {
            return try await single(destination, isFolder: false)
        } catch {
            // Copied: what is known stands until the next listing.
            log.warning("the copy could not be read back", metadata: [
                "remote": "\(remoteDescription)", "path": "\(destination.rawValue)", "error": "\(error)",
            ])
            return copied
        }
    }
}
