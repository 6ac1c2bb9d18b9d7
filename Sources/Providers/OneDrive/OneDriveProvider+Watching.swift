import Curl
import FavFSCore
import Foundation

/// Changes made elsewhere, from Graph's `delta` of the whole drive: the first call asks for
/// `token=latest` (the current state, nothing listed), later ones follow the `@odata.deltaLink`
/// and get every item changed anywhere since. Items are named by id; `OneDriveIdentities`
/// knows the paths of those this mount has seen.
extension OneDriveProvider: FolderWatchingProvider {
    /// At most this many `delta` pages per round; the rest comes next round.
    static let maxDeltaPages = 50

    public func startWatching(_ onChange: @escaping @Sendable (ItemIdentifier) -> Void) {
        watcher.start(self, onChange: onChange)
    }

    public func stopWatching() async { await watcher.stopAndWait() }

    public var isWatchingLive: Bool { watcher.isLive }

    /// Every folder this mount knows is reported, so the list of watched ones is not needed.
    public func watch(only folders: Set<ItemIdentifier>) {}
    public func watch(_ folder: ItemIdentifier) {}

    /// One round of `delta`: the folders whose listings changed. `410 resyncRequired` (the
    /// token is too old): starts again from the latest state and reports the root and every
    /// folder this mount has listed, since any of them may have changed meanwhile (the mount
    /// lists again only those it shows).
    func changedFolders() async throws -> Set<ItemIdentifier> {
        var url = watcher.deltaLink ?? (graph + "/me/drive/root/delta?token=latest")
        var changed = Set<ItemIdentifier>()
        for _ in 0..<Self.maxDeltaPages {
            guard client.isGraphURL(url) else {
                watcher.deltaLink = nil
                throw errors.invalid("a delta link outside \(graph): \(url)", request: "GET delta", path: "/", status: 200)
            }
            let response = try await client.call("GET", url, what: "GET delta", path: "/")
            if response.status == 410 {
                log.info("delta: Graph asks for a resync; listing again from the root", metadata: [
                    "remote": "\(remoteDescription)", "reason": "\(OneDriveErrors.summary(response.body) ?? "410")"])
                watcher.deltaLink = nil
                return changed.union(identities.knownFolders())
            }
            guard response.status == 200 else { throw errors.status(response, what: "GET delta", path: "/") }
            guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
                  let entries = object["value"] as? [[String: Any]] else {
                throw errors.invalid("not a delta collection (value, @odata.nextLink | @odata.deltaLink)", request: "GET delta", path: "/", status: 200)
            }
            for entry in entries { changed.formUnion(identities.apply(entry)) }
            if let next = object["@odata.nextLink"] as? String, !next.isEmpty {
                url = next
                continue
            }
            guard let done = object["@odata.deltaLink"] as? String, !done.isEmpty else {
                throw errors.invalid("a delta page with neither @odata.nextLink nor @odata.deltaLink", request: "GET delta", path: "/", status: 200)
            }
            watcher.deltaLink = done
            return changed
        }
        // Many pages: carry on from here next round.
        watcher.deltaLink = url
        return changed
    }
}
