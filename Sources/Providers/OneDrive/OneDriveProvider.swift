import Curl
import FavFSCore
import Foundation
import Logging

/// OneDrive through Microsoft Graph v1.0's driveItem API: listings in pages (`children` with
/// `$top`, then `@odata.nextLink`), metadata, reads pinned to a version (`content`'s redirect
/// to a pre-authenticated URL, with `Range`), uploads checked against the version they replace
/// (`If-Match`; new files with `conflictBehavior=fail`), upload sessions above 4 MiB, folders,
/// deletes, moves, times, server-side copies and `delta` for changes made elsewhere.
/// Authentication: an OAuth 2 refresh token (the remote's secret) and the application's client
/// id, traded for short-lived access tokens.
///
/// Versions are Graph's `cTag` (the content's tag): the same in listings, metadata and upload
/// answers, and untouched by a rename or a new modification time.
public final class OneDriveProvider: Provider {
    /// Where the remote is and how to sign in.
    public struct Configuration: Sendable {
        public var endpoints: OneDriveEndpoints
        /// The Application (client) ID the refresh token was issued to.
        public var clientID: String
        /// The long-lived OAuth 2 refresh token.
        public var refreshToken: String
        /// The folder of the drive that is the remote's root ("/" for all of it).
        public var rootFolder: String
        /// For messages: the onedrive:// form.
        public var remoteDescription: String
        /// Entries asked for per listing page (`$top`).
        public var pageSize = 500
        /// Files larger than this go up in an upload session; smaller ones in one PUT.
        public var sessionThreshold: Int64 = 4 * 1024 * 1024
        /// The bytes sent per session request: a multiple of 320 KiB, as Graph requires.
        public var sessionFragmentSize: Int64 = 32 * 320 * 1024
        /// The most seconds one call waits out 429/503 answers (nil: the transport's low-speed time).
        public var retryBudget: Double?
        /// Seconds between two `delta` calls while the mount watches for changes.
        public var deltaInterval: Double = 5
        /// The most seconds a server-side copy is waited for before it counts as failed.
        public var copyWait: Double = 120

        /// A remote at `endpoints` (Microsoft's by default) signed in with `refreshToken`,
        /// issued to the application `clientID`; the other settings keep their defaults.
        public init(endpoints: OneDriveEndpoints = .microsoft, clientID: String, refreshToken: String, rootFolder: String = "/",
                    remoteDescription: String) {
            self.endpoints = endpoints; self.clientID = clientID; self.refreshToken = refreshToken
            self.rootFolder = rootFolder; self.remoteDescription = remoteDescription
        }
    }

    /// The bytes of one upload-session fragment Graph counts in: 320 KiB.
    public static let fragmentUnit: Int64 = 320 * 1024

    public let remoteDescription: String
    public var capabilities: ProviderCapabilities {
        [.write, .rename, .delete, .createFolder, .quota, .rangedReads, .versions, .serverSideCopy, .thumbnails]
    }

    let configuration: Configuration
    let client: OneDriveClient
    let paths: OneDrivePaths
    let errors: OneDriveErrors
    /// Graph ids seen in answers, so that `delta` (which names items by id) can say which folders changed.
    let identities = OneDriveIdentities()
    /// Download URLs of versions read lately.
    let downloadURLs = OneDriveDownloadURLs()
    let watcher: OneDriveDeltaWatcher
    let log = Logger(label: "favfs.onedrive")

    /// A provider for one remote; `transport` may be shared with other providers. Without a
    /// `retryBudget`, throttled calls wait at most `transportOptions.lowSpeedTime` seconds.
    public init(configuration: Configuration, transport: CurlTransport, transportOptions: TransportOptions = TransportOptions()) {
        self.configuration = configuration
        remoteDescription = configuration.remoteDescription
        errors = OneDriveErrors(remote: configuration.remoteDescription)
        paths = OneDrivePaths(urlPath: configuration.rootFolder)
        client = OneDriveClient(transport: transport, endpoints: configuration.endpoints, clientID: configuration.clientID,
                                refreshToken: configuration.refreshToken, errors: errors,
                                retryBudget: configuration.retryBudget ?? Double(transportOptions.lowSpeedTime))
        watcher = OneDriveDeltaWatcher(interval: configuration.deltaInterval, remote: configuration.remoteDescription)
    }

    deinit { watcher.stop() }

    /// Access tokens fetched so far (tests: an expired token is replaced once).
    public var accessTokensFetched: Int { client.tokens.fetchCount }

    var graph: String { configuration.endpoints.graph }

    // MARK: listing

    /// One `children` page: the first with `$top`, the next ones at the `@odata.nextLink` Graph gave.
    public func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        let path = folder.rawValue
        let url: String
        if let page {
            guard client.isGraphURL(page.token) else {
                throw errors.invalid("an @odata.nextLink outside \(graph): \(page.token)", request: "GET children", path: path, status: 200)
            }
            url = page.token
        } else {
            url = paths.url(graph, folder, "children") + "?$top=\(max(1, configuration.pageSize))"
        }
        let response = try await client.call("GET", url, what: "GET children", path: path)
        guard response.status == 200 else { throw errors.status(response, what: "GET children", path: path) }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let entries = object["value"] as? [[String: Any]] else {
            throw errors.invalid("not a collection of driveItems (value, @odata.nextLink)", request: "GET children", path: path, status: 200)
        }
        var items: [Item] = []
        var skipped: [(name: String, problem: ItemNameProblem)] = []
        items.reserveCapacity(entries.count)
        for entry in entries {
            guard let name = entry["name"] as? String, !name.isEmpty else { continue }
            if let problem = ItemIdentifier.validate(name: name) {
                log.warning("skipping an entry the remote listed", metadata: [
                    "remote": "\(remoteDescription)", "folder": "\(path)", "name": "\(name)", "problem": "\(problem.rawValue)",
                ])
                skipped.append((name, problem))
                continue
            }
            let id = folder.child(name)
            if let item = OneDriveItems.item(entry, id: id) {
                items.append(item)
                identities.learn(entry, at: id)
            }
        }
        let next = (object["@odata.nextLink"] as? String).flatMap { $0.isEmpty ? nil : Page($0) }
        return EnumerationPage(items: items, nextPage: next, skipped: skipped)
    }

    /// The driveItem at the identifier's path (the drive's root has one too, so a mount checks
    /// the refresh token before it says it is mounted).
    public func item(for identifier: ItemIdentifier) async throws -> Item {
        let path = identifier.rawValue
        let response = try await client.call("GET", paths.url(graph, identifier), what: "GET driveItem", path: path)
        guard response.status == 200 else { throw errors.status(response, what: "GET driveItem", path: path) }
        return try item(from: response.body, id: identifier, request: "GET driveItem")
    }

    /// The Graph id of a folder, for a `parentReference` (whose `path` is read-only): one
    /// `GET` of the folder.
    func folderID(_ folder: ItemIdentifier) async throws -> String {
        let path = folder.rawValue
        let response = try await client.call("GET", paths.url(graph, folder), what: "GET driveItem", path: path)
        guard response.status == 200 else { throw errors.status(response, what: "GET driveItem", path: path) }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let id = object["id"] as? String, !id.isEmpty else {
            throw errors.invalid("a driveItem without an id", request: "GET driveItem", path: path, status: 200)
        }
        guard object["folder"] != nil || object["root"] != nil else {
            throw ProviderError(.notAFolder, remote: remoteDescription, path: path, status: 200, detail: "the destination's parent is not a folder")
        }
        identities.learn(object, at: folder)
        return id
    }

    /// The item of a driveItem answer, remembering its id.
    func item(from body: Data, id: ItemIdentifier, request: String) throws -> Item {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw errors.invalid("not a JSON driveItem", request: request, path: id.rawValue, status: 200)
        }
        guard let item = OneDriveItems.item(object, id: id) else {
            throw errors.invalid("a driveItem that is neither a file nor a folder", request: request, path: id.rawValue, status: 200)
        }
        identities.learn(object, at: id)
        return item
    }

    // MARK: reading

    /// `GET …:/content` with `If-Match: <cTag>` and `Range`: Graph answers 302 to a
    /// pre-authenticated download URL, which is fetched with the same `Range` and without the
    /// `Authorization` header (it must not leave Graph), and reused for the next ranges of that
    /// version for a minute (`OneDriveDownloadURLs`). Graph documents no `If-Match` for
    /// downloads; where it is honoured (the fixture) a changed file is 412, and a download URL
    /// that no longer serves that content (404, 410, 412) is `.versionChanged` too: the caller
    /// looks again, and bytes of two versions are never mixed.
    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let path = item.identifier.rawValue
        if range.isEmpty { return range }
        if let version = item.version, let url = downloadURLs.url(path, version: version) {
            let result = try await download(url, item: item, range: range, into: sink)
            if let written = try RangedGET.written(result, requested: range, invalid: { errors.invalid($0, request: "GET the download URL", path: path, status: 206) }) {
                return written
            }
            // Expired or the content changed: ask `content` again, which says which.
            downloadURLs.forget(path, version: version)
        }
        let rangeHeader = CurlHeader("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")
        var pin: [CurlHeader] = []
        if let version = item.version { pin.append(CurlHeader("If-Match", version)) }
        let progress = item.version == nil ? nil : sink.progress
        var result: (response: CurlResponse, writtenAt: Int64) = (CurlResponse(status: 0, headers: [:], body: Data()), 0)
        _ = try await client.send("GET content", path: path) { token in
            let request = CurlRequest(url: self.paths.url(self.graph, item.identifier, "content"),
                                      headers: [CurlHeader("Authorization", "Bearer \(token)"), rangeHeader] + pin)
            result = try await self.client.transport.downloadRange(request, into: sink.fd, requestedStart: range.lowerBound, progress: progress)
            return result.response
        }
        var what = "GET content"
        if [301, 302, 303, 307, 308].contains(result.response.status) {
            guard let location = result.response.headers["location"], !location.isEmpty else {
                throw errors.invalid("a redirect without a Location", request: what, path: path, status: result.response.status)
            }
            what = "GET the download URL"
            result = try await download(location, item: item, range: range, into: sink)
            if let version = item.version, (200..<300).contains(result.response.status) {
                downloadURLs.keep(location, for: path, version: version)
            }
        }
        if let written = try RangedGET.written(result, requested: range, invalid: { errors.invalid($0, request: what, path: path, status: 206) }) {
            return written
        }
        let status = result.response.status
        if item.version != nil, [404, 410, 412].contains(status), status == 412 || what != "GET content" {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: status,
                                detail: "\(what) for version \(item.version ?? ""): \(status) \(WebDAVErrors.reason(status)); the file changed or went away")
        }
        throw errors.status(result.response, what: what, path: path)
    }

    /// A ranged GET of a pre-authenticated download URL: no `Authorization` header.
    private func download(_ url: String, item: Item, range: Range<Int64>, into sink: ContentSink) async throws
        -> (response: CurlResponse, writtenAt: Int64)
    {
        let rangeHeader = CurlHeader("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")
        let progress = item.version == nil ? nil : sink.progress
        var result: (response: CurlResponse, writtenAt: Int64) = (CurlResponse(status: 0, headers: [:], body: Data()), 0)
        _ = try await client.sendUnauthenticated("GET the download URL", path: item.identifier.rawValue) {
            result = try await self.client.transport.downloadRange(CurlRequest(url: url, headers: [rangeHeader]), into: sink.fd,
                                                                   requestedStart: range.lowerBound, progress: progress)
            return result.response
        }
        return result
    }

    // MARK: quota

    /// The drive's `quota`: used, remaining and total.
    public func quota() async throws -> Quota? {
        let response = try await client.call("GET", graph + "/me/drive", what: "GET drive", path: "/")
        guard response.status == 200 else { throw errors.status(response, what: "GET drive", path: "/") }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
            throw errors.invalid("not a drive resource", request: "GET drive", path: "/", status: 200)
        }
        guard let quota = object["quota"] as? [String: Any] else { return nil }
        let used = (quota["used"] as? NSNumber)?.int64Value
        let remaining = (quota["remaining"] as? NSNumber)?.int64Value
        let total = (quota["total"] as? NSNumber)?.int64Value
        return Quota(usedBytes: used, availableBytes: remaining, totalBytes: total)
    }
}
