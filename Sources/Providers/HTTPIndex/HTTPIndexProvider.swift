import Curl
import FavFSCore
import Foundation
import Logging

/// A read-only remote from an HTTP(S) server's directory index pages (Apache mod_autoindex,
/// nginx autoindex, `python3 -m http.server`): folders are the links of `GET folder/`, files are
/// read with ranged GETs. Not a `WritableProvider`: the mount is read-only.
public final class HTTPIndexProvider: Provider {
    /// Where the remote is, how to log in, where metadata comes from.
    public struct Configuration: Sendable {
        /// e.g. http://127.0.0.1:8080/files/ (scheme http or https; percent-encoded; ends with '/').
        public var baseURL: String
        /// For messages: the remote's URL, without credentials.
        public var remoteDescription: String
        /// Basic or Digest (`.any`: libcurl answers whichever the server challenges with).
        public var credentials: CurlCredentials?
        public var metadata: HTTPIndexMetadata
        /// HEAD requests in flight at once while listing (over the transport's reused connections).
        public var headConcurrency: Int
        public init(baseURL: String, remoteDescription: String, credentials: CurlCredentials? = nil,
                    metadata: HTTPIndexMetadata = .head, headConcurrency: Int = 8) {
            self.baseURL = baseURL; self.remoteDescription = remoteDescription; self.credentials = credentials
            self.metadata = metadata; self.headConcurrency = max(1, headConcurrency)
        }
    }

    public let remoteDescription: String
    /// Ranged reads always (a server that ignores Range is handled); versions with HEAD metadata:
    /// every file then has a strong ETag or size + Last-Modified to the second, and reads are pinned to it.
    public var capabilities: ProviderCapabilities {
        configuration.metadata == .head ? [.rangedReads, .versions] : [.rangedReads]
    }

    let configuration: Configuration
    let transport: CurlTransport
    let paths: WebDAVPaths
    /// The HTTP status mapping is WebDAV's (401/403 denied, 404 not found, 412 changed, 5xx server error).
    let errors: WebDAVErrors
    let log = Logger(label: "favfs.httpindex")

    /// A provider for one remote; `transport` may be shared with other providers.
    public init(configuration: Configuration, transport: CurlTransport) {
        self.configuration = configuration
        self.transport = transport
        self.remoteDescription = configuration.remoteDescription
        self.paths = WebDAVPaths(baseURL: configuration.baseURL)
        self.errors = WebDAVErrors(remote: configuration.remoteDescription)
    }

    // MARK: listing

    /// GET of the folder's index page, then each file's metadata (see `HTTPIndexMetadata`).
    /// One page: index pages are not paged.
    public func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        if let page {
            throw ProviderError(.notSupported, remote: remoteDescription, path: folder.rawValue,
                                detail: "HTTP index listings have no pages; got page token \(page.token)")
        }
        let url = paths.url(for: folder, isFolder: true)
        let response = try await send(CurlRequest(method: "GET", url: url, credentials: credentials()),
                                      path: folder.rawValue)
        guard response.status == 200 else {
            throw indexError(response, method: "GET", path: folder.rawValue)
        }
        guard Self.isHTML(response) else {
            throw ProviderError(.notAFolder, remote: remoteDescription, path: folder.rawValue, status: 200,
                                detail: "GET of the folder URL: not a directory index (Content-Type \(response.headers["content-type"] ?? "none"))")
        }
        let index = HTTPIndexParser.parse(Array(response.body), folderURL: url)
        for (name, problem) in index.skipped {
            log.warning("skipping an entry the server listed", metadata: [
                "remote": "\(remoteDescription)", "folder": "\(folder.rawValue)",
                "name": "\(name.debugDescription)", "problem": "\(problem.rawValue)",
            ])
        }
        for href in index.undecodable {
            log.warning("skipping a link whose name is not UTF-8", metadata: [
                "remote": "\(remoteDescription)", "folder": "\(folder.rawValue)", "href": "\(href)",
            ])
        }
        let items = try await items(for: index.entries, in: folder)
        return EnumerationPage(items: items, nextPage: nil, skipped: index.skipped)
    }

    /// Files: HEAD (a redirect to "path/" means a folder). Folders and the root: HEAD of
    /// "path/", which must answer 200 with an HTML index.
    public func item(for identifier: ItemIdentifier) async throws -> Item {
        if identifier.isRoot { return try await folderItem(identifier) }
        let url = paths.url(for: identifier, isFolder: false)
        let response = try await head(url, path: identifier.rawValue)
        switch response.status {
        case 200:
            return fileItem(identifier, response)
        case 301, 302, 303, 307, 308:
            // "path" → "path/" is how Apache, nginx and python's server say "this is a folder".
            guard let location = response.headers["location"], isFolderRedirect(location, of: identifier) else {
                throw errors.invalid("redirected to \(response.headers["location"] ?? "nowhere"), not to the folder \(identifier.rawValue)/",
                                     method: "HEAD", path: identifier.rawValue, status: response.status)
            }
            return try await folderItem(identifier)
        default:
            throw errors.status(response.status, method: "HEAD", path: identifier.rawValue, body: response.body)
        }
    }

    private func folderItem(_ identifier: ItemIdentifier) async throws -> Item {
        let response = try await head(paths.url(for: identifier, isFolder: true), path: identifier.rawValue)
        guard response.status == 200 else { throw indexError(response, method: "HEAD", path: identifier.rawValue) }
        guard Self.isHTML(response) else {
            throw ProviderError(.notAFolder, remote: remoteDescription, path: identifier.rawValue, status: 200,
                                detail: "HEAD of the folder URL: not a directory index (Content-Type \(response.headers["content-type"] ?? "none"))")
        }
        // Folders carry no mtime or version: index pages give none to the second, and a listing
        // and item(for:) must report the same.
        return Item(identifier: identifier, kind: .folder)
    }

    /// True when `location` is the item's own URL with a trailing slash.
    private func isFolderRedirect(_ location: String, of identifier: ItemIdentifier) -> Bool {
        let target = location.trimmingWhitespace()
        guard target.hasSuffix("/"), let got = WebDAVPaths.segments(ofHref: target) else { return false }
        let want = paths.baseSegments + identifier.components
        return got.count == want.count && zip(got, want).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
    }

    /// A file's item from the headers of a HEAD (or GET) response.
    func fileItem(_ identifier: ItemIdentifier, _ response: CurlResponse) -> Item {
        let size = response.headers["content-length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
            ?? response.contentLength ?? 0
        let modified = response.headers["last-modified"].flatMap(HTTPDate.parse)
        let metadata = configuration.metadata
        return Item(identifier: identifier, kind: .file, size: size,
                    modified: HTTPIndexVersion.reported(modified, metadata: metadata),
                    version: HTTPIndexVersion.make(size: size, modified: modified, etag: response.headers["etag"], metadata: metadata))
    }

    // MARK: requests

    /// HEAD, or a one-byte GET for servers that refuse HEAD (405/501): its headers say the same.
    func head(_ url: String, path: String) async throws -> CurlResponse {
        let credentials = credentials()
        let response = try await send(CurlRequest(method: "HEAD", url: url, credentials: credentials), path: path)
        guard response.status == 405 || response.status == 501 else { return response }
        var got = try await send(CurlRequest(method: "GET", url: url, headers: [CurlHeader("Range", "bytes=0-0")],
                                             credentials: credentials), path: path)
        if got.status == 206, let total = HTTPIndexVersion.totalSize(got) {
            got.status = 200
            got.headers["content-length"] = "\(total)"
        }
        return got
    }

    /// The credentials for a request (the transport learns the scheme the server wants).
    func credentials() -> CurlCredentials? { configuration.credentials }

    func send(_ request: CurlRequest, path: String) async throws -> CurlResponse {
        do {
            return try await transport.perform(request)
        } catch {
            throw errors.transport(error, method: request.method, path: path)
        }
    }

    /// A folder URL that did not answer with an index: 404 → not found; 401/403 → denied (a 403
    /// often means the server lists no index for this folder); others mapped as usual.
    private func indexError(_ response: CurlResponse, method: String, path: String) -> ProviderError {
        var error = errors.status(response.status, method: method, path: path, body: response.body)
        switch response.status {
        case 403: error.detail += " — the server refuses this folder or publishes no index of it"
        case 404: error.detail += " — no such folder (or no directory index here)"
        case 300..<400: error.detail += " — redirected to \(response.headers["location"] ?? "nowhere"), not a directory index"
        default: break
        }
        return error
    }

    /// Index pages are HTML; a file that happens to be at a folder URL is not.
    static func isHTML(_ response: CurlResponse) -> Bool {
        guard let type = response.headers["content-type"]?.lowercased() else {
            // No Content-Type: sniff.
            let head = String(decoding: response.body.prefix(512), as: UTF8.self).lowercased()
            return head.contains("<html") || head.contains("<!doctype html") || head.contains("<a ")
        }
        return type.hasPrefix("text/html") || type.hasPrefix("application/xhtml")
    }
}
