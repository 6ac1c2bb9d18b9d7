import Curl
import FavFSCore
import Foundation
import Logging

/// Dropbox through its HTTP API v2: listings in pages (`list_folder` + `continue`), metadata
/// (`get_metadata`), reads of one revision (`download` of `rev:…` with `Range`), uploads checked
/// against the revision they replace (`upload` in `update` mode), sessions above 150 MiB, and
/// folders, deletes, moves and server-side copies. Authentication: an OAuth 2 refresh token (the
/// remote's secret) and the app key (`client_id`), traded for short-lived access tokens.
///
/// Versions are Dropbox's `rev`: the same string in listings, metadata and upload answers.
public final class DropboxProvider: Provider {
    /// Where the remote is and how to sign in.
    public struct Configuration: Sendable {
        public var endpoints: DropboxEndpoints
        /// The app key (OAuth client id) the refresh token was issued to.
        public var clientID: String
        /// The long-lived OAuth 2 refresh token.
        public var refreshToken: String
        /// The folder of the Dropbox that is the remote's root ("/" for all of it).
        public var rootFolder: String
        /// For messages: the dropbox:// form.
        public var remoteDescription: String
        /// Files larger than this go up in an upload session (Dropbox takes 150 MiB per request).
        public var sessionThreshold: Int64 = 150 * 1024 * 1024
        /// The bytes sent per session request (at most 150 MiB; a multiple of 4 MiB as Dropbox advises).
        public var sessionChunkSize: Int64 = 64 * 1024 * 1024
        /// A new file written in order goes up while it is written, in slices of this many bytes
        /// (a multiple of 4 MiB), once it holds one; smaller files go whole at their close.
        public var streamingSliceSize: Int64 = 8 * 1024 * 1024
        /// The most seconds one call waits out 429/503 answers (nil: the transport's low-speed time).
        public var retryBudget: Double?
        /// The change feed's long-poll wait, in seconds (Dropbox takes 30...480).
        public var longPollTimeout = 120
        /// The longest wait between attempts of a change feed that keeps failing.
        public var changeFeedMaxRetryDelay = 300.0
        /// The command that signs in again, named when Dropbox refuses the refresh token.
        public var signInCommand = "favfs remote add NAME dropbox:///PATH --option client_id=KEY --force"

        /// A remote at `endpoints` (Dropbox's own by default) signed in with `refreshToken`,
        /// issued to the app `clientID`; the other settings keep their defaults.
        public init(endpoints: DropboxEndpoints = .dropbox, clientID: String, refreshToken: String, rootFolder: String = "/",
                    remoteDescription: String) {
            self.endpoints = endpoints; self.clientID = clientID; self.refreshToken = refreshToken
            self.rootFolder = rootFolder; self.remoteDescription = remoteDescription
        }
    }

    public let remoteDescription: String
    public var capabilities: ProviderCapabilities {
        [.write, .rename, .delete, .createFolder, .quota, .rangedReads, .versions, .serverSideCopy, .thumbnails]
    }

    let configuration: Configuration
    let client: DropboxClient
    let paths: DropboxPaths
    let errors: DropboxErrors
    let log = Logger(label: "favfs.dropbox")
    /// The long poll that reports changes (`FolderWatchingProvider`).
    let changeFeed: DropboxChangeFeed

    /// A provider for one remote; `transport` may be shared with other providers. Without a
    /// `retryBudget`, throttled calls wait at most `transportOptions.lowSpeedTime` seconds.
    public init(configuration: Configuration, transport: CurlTransport, transportOptions: TransportOptions = TransportOptions()) {
        self.configuration = configuration
        remoteDescription = configuration.remoteDescription
        errors = DropboxErrors(remote: configuration.remoteDescription, signInCommand: configuration.signInCommand)
        paths = DropboxPaths(urlPath: configuration.rootFolder)
        client = DropboxClient(transport: transport, endpoints: configuration.endpoints, clientID: configuration.clientID,
                               refreshToken: configuration.refreshToken, errors: errors,
                               retryBudget: configuration.retryBudget ?? Double(transportOptions.lowSpeedTime))
        changeFeed = DropboxChangeFeed(client: client, paths: paths, errors: errors,
                                       timing: .init(longPollTimeout: min(480, max(30, configuration.longPollTimeout)),
                                                     maxRetryDelay: configuration.changeFeedMaxRetryDelay))
    }

    /// Access tokens fetched so far (tests: an expired token is replaced once).
    public var accessTokensFetched: Int { client.tokens.fetchCount }

    // MARK: listing

    /// One `list_folder` (first page) or `list_folder/continue` (the page's cursor) answer.
    public func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        let path = folder.rawValue
        let response: CurlResponse
        let route: String
        if let page {
            route = "files/list_folder/continue"
            response = try await client.rpc(route, ["cursor": page.token], path: path)
        } else {
            route = "files/list_folder"
            response = try await client.rpc(route, ["path": paths.path(folder), "recursive": false, "include_deleted": false], path: path)
        }
        guard response.status == 200 else {
            // A cursor Dropbox no longer takes (`reset`): the caller lists again from the start.
            throw errors.status(response, route: route, path: path, meaning: ["reset": .versionChanged])
        }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let entries = object["entries"] as? [[String: Any]] else {
            throw errors.invalid("not a ListFolderResult (entries, cursor, has_more)", request: route, path: path, status: 200)
        }
        var items: [Item] = []
        var skipped: [(name: String, problem: ItemNameProblem)] = []
        items.reserveCapacity(entries.count)
        for entry in entries {
            guard let name = DropboxMetadata.name(entry) else { continue }
            if let problem = ItemIdentifier.validate(name: name) {
                log.warning("skipping an entry the remote listed", metadata: [
                    "remote": "\(remoteDescription)", "folder": "\(path)", "name": "\(name)", "problem": "\(problem.rawValue)",
                ])
                skipped.append((name, problem))
                continue
            }
            if let item = DropboxMetadata.item(entry, id: folder.child(name)) { items.append(item) }
        }
        var next: Page?
        if object["has_more"] as? Bool == true {
            guard let cursor = object["cursor"] as? String, !cursor.isEmpty else {
                throw errors.invalid("has_more without a cursor", request: route, path: path, status: 200)
            }
            next = Page(cursor)
        }
        return EnumerationPage(items: items, nextPage: next, skipped: skipped)
    }

    /// `get_metadata`. Dropbox does not describe its own root: there, a listing of one entry
    /// answers instead, so that a mount checks the refresh token before it says it is mounted.
    public func item(for identifier: ItemIdentifier) async throws -> Item {
        let path = identifier.rawValue
        if identifier.isRoot && paths.root.isEmpty {
            let response = try await client.rpc("files/list_folder", ["path": "", "limit": 1], path: path)
            guard response.status == 200 else { throw errors.status(response, route: "files/list_folder", path: path) }
            return Item(identifier: .rootContainer, kind: .folder)
        }
        let response = try await client.rpc("files/get_metadata", ["path": paths.path(identifier)], path: path)
        guard response.status == 200 else { throw errors.status(response, route: "files/get_metadata", path: path) }
        return try item(from: response.body, id: identifier, request: "files/get_metadata")
    }

    /// The item of a metadata answer (`FileMetadata` or `FolderMetadata`, bare or under `metadata`).
    func item(from body: Data, id: ItemIdentifier, request: String) throws -> Item {
        guard var object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw errors.invalid("not JSON metadata", request: request, path: id.rawValue, status: 200)
        }
        if let inner = object["metadata"] as? [String: Any] { object = inner }
        guard let item = DropboxMetadata.item(object, id: id) else {
            throw errors.invalid("metadata that is neither a file nor a folder", request: request, path: id.rawValue, status: 200)
        }
        return item
    }

    // MARK: reading

    /// A ranged `download` of the item's revision (`"path": "rev:…"`): Dropbox serves exactly
    /// that revision's bytes, so a file changed meanwhile never mixes two contents. A revision
    /// Dropbox no longer has (`path/not_found`) is `.versionChanged`: the caller looks again.
    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let path = item.identifier.rawValue
        if range.isEmpty { return range }
        let argument = ["path": item.version.map { "rev:" + $0 } ?? paths.path(item.identifier)]
        let rangeHeader = CurlHeader("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")
        var writtenAt = range.lowerBound
        // A whole file is checked against its content_hash once it is in: its bytes are not
        // shown to readers before that (`checkWholeFile`).
        let wholeFile = range.lowerBound == 0 && range.upperBound >= item.size
        let progress = item.version == nil || wholeFile ? nil : sink.progress
        let response = try await client.send("files/download", path: path) { token in
            let request = self.client.contentRequest("files/download", argument, token: token, headers: [rangeHeader])
            let result = try await self.client.transport.downloadRange(request, into: sink.fd, requestedStart: range.lowerBound,
                                                                     progress: progress)
            writtenAt = result.writtenAt
            return result.response
        }
        switch response.status {
        case 206:
            guard writtenAt == range.lowerBound || response.bytesWritten == 0 else {
                throw errors.invalid("asked for bytes from \(range.lowerBound), got Content-Range \(response.headers["content-range"] ?? "none")",
                                     request: "files/download", path: path, status: 206)
            }
            let got = writtenAt..<(writtenAt + response.bytesWritten)
            try await checkWholeFile(got, response, fd: sink.fd, path: path)
            return got
        case 200:
            try await checkWholeFile(0..<response.bytesWritten, response, fd: sink.fd, path: path)
            return 0..<response.bytesWritten
        case 416:
            return range.lowerBound..<range.lowerBound
        case 409 where item.version != nil && DropboxErrors.tags(response.body).contains("not_found"):
            throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: 409,
                                detail: "files/download of rev:\(item.version ?? ""): Dropbox has no such revision now (\(DropboxErrors.summary(response.body) ?? "not_found")); the file changed or went away")
        default:
            throw errors.status(response, route: "files/download", path: path)
        }
    }

    /// A download that brought the whole file is checked against the `content_hash` in its
    /// `Dropbox-API-Result`: damaged bytes are refused (`.serverError`, read again), never
    /// kept in the cache. A part of a file cannot be checked (the hash covers 4 MiB blocks of
    /// the whole).
    private func checkWholeFile(_ got: Range<Int64>, _ response: CurlResponse, fd: Int32, path: String) async throws {
        guard got.lowerBound == 0, let header = response.headers["dropbox-api-result"],
              let meta = try? JSONSerialization.jsonObject(with: Data(header.utf8)) as? [String: Any],
              let size = (meta["size"] as? NSNumber)?.int64Value, size == got.upperBound,
              let expected = meta["content_hash"] as? String else { return }
        let found = try await BlockingWork.run { DropboxContentHash.of(fd: fd, length: size) }
        guard let found, found != expected else { return }
        throw ProviderError(.serverError, remote: remoteDescription, path: path, status: response.status,
                            detail: "files/download: the bytes received do not match the file's content_hash (\(found), Dropbox says \(expected)): damaged on the way; read again")
    }

    // MARK: quota

    /// `users/get_space_usage`: used, and the allocation (individual or the team's share).
    public func quota() async throws -> Quota? {
        let response = try await client.rpc("users/get_space_usage", nil, path: "/")
        guard response.status == 200 else { throw errors.status(response, route: "users/get_space_usage", path: "/") }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let used = (object["used"] as? NSNumber)?.int64Value else {
            throw errors.invalid("not a SpaceUsage", request: "users/get_space_usage", path: "/", status: 200)
        }
        let allocation = object["allocation"] as? [String: Any]
        guard let allocated = (allocation?["allocated"] as? NSNumber)?.int64Value, allocated > 0 else {
            return Quota(usedBytes: used, availableBytes: nil)
        }
        // A team allocation counts the team's use; the user's own use is what this account may add to.
        let teamUsed = (allocation?["used"] as? NSNumber)?.int64Value
        return Quota(usedBytes: used, availableBytes: max(0, allocated - (teamUsed ?? used)))
    }
}
