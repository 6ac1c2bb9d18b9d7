import Curl
import FavFSCore
import Foundation
import Logging

/// WebDAV over HTTP(S): PROPFIND Depth 1 listings, ranged GETs pinned to the ETag.
public final class WebDAVProvider: Provider {
    /// Where the remote is and how to log in.
    public struct Configuration: Sendable {
        /// e.g. http://127.0.0.1:8080/files/ (scheme http or https; path ends with '/').
        public var baseURL: String
        /// For messages: the dav:// form, without credentials.
        public var remoteDescription: String
        public var credentials: CurlCredentials?
        public init(baseURL: String, remoteDescription: String, credentials: CurlCredentials?) {
            self.baseURL = baseURL; self.remoteDescription = remoteDescription; self.credentials = credentials
        }
    }

    public let remoteDescription: String
    public var capabilities: ProviderCapabilities {
        let all: ProviderCapabilities = [.rangedReads, .versions, .quota, .write, .rename, .delete, .createFolder, .serverSideCopy]
        return listingsHideDotNames.value ? all.union(.listingsMayLeaveOutDotNames) : all
    }

    // Internal, not private: the write side (WebDAVProvider+Writing.swift) uses them too.
    let configuration: Configuration
    let transport: CurlTransport
    /// Listings (PROPFIND) have their own transfer thread and connections: receiving a 40 MB
    /// listing in the background must not delay the first byte of a read.
    let listingTransport: CurlTransport
    let paths: WebDAVPaths
    let errors: WebDAVErrors
    let log = Logger(label: "favfs.webdav")
    /// Set when the server showed it has no WebDAV locks (see WebDAVProvider+Locking.swift).
    let lockingUnsupported = OnceFlag()
    /// Set when the server refused a chunked PUT (411, 501): files upload whole at their close.
    let chunkedUploadsRefused = OnceFlag()
    /// LOCK and UNLOCK go one at a time (see SerialGate).
    let lockRequests = SerialGate()
    /// Set when a listing showed a file without `getetag` (nginx's dav-ext module): versions are
    /// then made from size and mtime (`WebDAVETag.synthetic`), also from a HEAD's answer, and an
    /// upload is checked by a PROPFIND right before it (see `upload`).
    let listingsLackETags = OnceFlag()
    /// Set when a listing showed a file with `getetag`: a HEAD's ETag is then the version.
    let listingsHaveETags = OnceFlag()
    /// Set when the server would not keep a modification time as a dead property
    /// (WebDAVProvider+Times.swift): no PROPPATCH is sent again.
    let timesNotKept = OnceFlag()
    /// Set when a PROPPATCH of a file's time that the server said it stored was read back with
    /// the time and the same version: such answers are then believed without the read-back
    /// (Apache keeps dead properties beside the file; its ETag does not move with them).
    let storedTimesKeepVersion = OnceFlag()
    /// Set when a listing came from nginx, whose dav-ext module leaves names starting with a
    /// dot out of listings (a PROPFIND of such a name answers).
    let listingsHideDotNames = OnceFlag()

    /// The properties a listing needs, and nothing more (each costs the server a lookup).
    /// `F:` names are in favfs's namespace (`WebDAVModifiedTime`), the others in `DAV:`.
    static let itemProperties = ["resourcetype", "getcontentlength", "getlastmodified", "getetag",
                                 "F:\(WebDAVModifiedTime.property)"]
    static let quotaProperties = ["quota-available-bytes", "quota-used-bytes"]

    /// A provider for one remote; `transport` may be shared with other providers.
    /// `listingTransport` carries PROPFINDs (default: `transport`).
    public init(configuration: Configuration, transport: CurlTransport, listingTransport: CurlTransport? = nil) {
        self.listingTransport = listingTransport ?? transport
        self.configuration = configuration
        self.transport = transport
        self.remoteDescription = configuration.remoteDescription
        self.paths = WebDAVPaths(baseURL: configuration.baseURL)
        self.errors = WebDAVErrors(remote: configuration.remoteDescription)
    }

    // MARK: listing

    /// Lists a folder with one PROPFIND Depth 1; WebDAV has no paging, so `nextPage` is nil.
    public func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        if let page {
            // Never issued by this provider: a caller mixed up providers.
            throw ProviderError(.notSupported, remote: remoteDescription, path: folder.rawValue,
                                detail: "WebDAV listings have no pages; got page token \(page.token)")
        }
        let (paths, errors, log) = (self.paths, self.errors, self.log)
        let page = try await propfind(folder, isFolder: true, depth: "1", properties: Self.itemProperties) { resources in
            var builder = WebDAVListing.Builder(folder: folder, paths: paths, errors: errors, log: log)
            try resources { builder.add($0) }
            return try builder.page()
        }
        noteETags(of: page.items)
        return page
    }

    /// Whether the server's listings carry ETags, from the first file one shows.
    func noteETags(of items: [Item]) {
        guard !listingsLackETags.value, !listingsHaveETags.value,
              let version = items.first(where: { $0.kind == .file })?.version else { return }
        if WebDAVETag.isSynthetic(version) { noteListingsLackETags() } else { listingsHaveETags.set() }
    }

    /// The server sends no `getetag`: said once, at the first listing that shows it.
    func noteListingsLackETags() {
        guard !listingsLackETags.value else { return }
        listingsLackETags.set()
        log.notice("""
            the server's listings have no ETags (getetag): a file's version is its size and modification time, \
            checked with a PROPFIND right before each upload; a change made by another client within that round trip, \
            or within the same second with the same size, is not noticed
            """, metadata: ["remote": "\(remoteDescription)"])
    }

    /// PROPFIND Depth 0. Tries the file URL first; a 301 (Apache's answer for a folder without
    /// its slash) or a collection means a folder, asked again at the folder URL.
    public func item(for identifier: ItemIdentifier) async throws -> Item {
        if identifier.isRoot {
            return try await single(identifier, isFolder: true)
        }
        do {
            let item = try await single(identifier, isFolder: false)
            if item.kind == .folder {
                // Refresh from the canonical folder URL: some servers give folders a different ETag there.
                return (try? await single(identifier, isFolder: true)) ?? item
            }
            return item
        } catch let error as ProviderError where error.status.map({ (300..<400).contains($0) }) == true {
            return try await single(identifier, isFolder: true)
        }
    }

    func single(_ identifier: ItemIdentifier, isFolder: Bool) async throws -> Item {
        let resources = try await propfind(identifier, isFolder: isFolder, depth: "0", properties: Self.itemProperties)
        let target = WebDAVPaths.Relation.child(name: identifier.name)
        let match = resources.first { resource in
            let relation = paths.relation(ofHref: resource.href, to: identifier.parent ?? .rootContainer)
            return identifier.isRoot ? relation == .itself : relation == target
        } ?? (resources.count == 1 ? resources[0] : nil)
        guard let match else {
            throw errors.invalid("the 207 response has no entry for the item (\(resources.count) entries)",
                                 method: "PROPFIND", path: identifier.rawValue, status: 207)
        }
        let item = item(from: match, identifier: identifier)
        noteETags(of: [item])
        return item
    }

    private func item(from resource: DAVResource, identifier: ItemIdentifier) -> Item {
        WebDAVListing.item(from: resource, identifier: identifier)
    }

    // MARK: reading

    /// A ranged GET into the sink at the same offsets, pinned to a strong ETag with If-Match.
    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let path = item.identifier.rawValue
        if range.isEmpty { return range }
        var headers = [CurlHeader("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")]
        // A weak ETag cannot be used with If-Match (RFC 9110 §13.1.1 uses strong comparison),
        // nor can a version made here (`WebDAVETag.synthetic`).
        var pinned = false
        if let version = item.version, !WebDAVETag.isWeak(version), !WebDAVETag.isSynthetic(version) {
            headers.append(CurlHeader("If-Match", version))
            pinned = true
        }
        let request = CurlRequest(method: "GET", url: paths.url(for: item.identifier, isFolder: false), headers: headers,
                                  credentials: configuration.credentials)
        let result: (response: CurlResponse, writtenAt: Int64)
        do {
            // Progress only for pinned reads: unpinned bytes are not known to be of this version.
            result = try await transport.downloadRange(request, into: sink.fd, requestedStart: range.lowerBound,
                                                       progress: pinned ? sink.progress : nil)
        } catch {
            throw errors.transport(error, method: "GET", path: path)
        }
        let response = result.response
        // Unpinned (a weak ETag): the answer's own ETag tells whether these bytes are of the
        // listed version; Apache sends the same tag, strong, once the file is a second old.
        if !pinned, let version = item.version {
            if WebDAVETag.isSynthetic(version) {
                // No ETag in listings: the answer's modification time must still be the listed one.
                if let listed = item.modified, let now = response.headers["last-modified"].flatMap(HTTPDate.parse),
                   Int64(now.rounded(.down)) != Int64(listed.rounded(.down)) {
                    throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: response.status,
                                        detail: "GET: the file's Last-Modified is \(response.headers["last-modified"]!) now, not what was listed; it changed on the server")
                }
            } else if let etag = response.headers["etag"], !WebDAVETag.weaklyEqual(etag, version) {
                throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: response.status,
                                    detail: "GET: the file's ETag is \(etag) now, \(version) when it was listed; it changed on the server")
            }
        }
        if let written = try RangedGET.written(result, requested: range, invalid: { errors.invalid($0, method: "GET", path: path, status: 206) }) {
            return written
        }
        throw errors.status(response.status, method: "GET", path: path, body: response.body)
    }

    // MARK: quota

    /// RFC 4331 quota properties of the root; nil when the server has neither.
    public func quota() async throws -> Quota? {
        let resources = try await propfind(.rootContainer, isFolder: true, depth: "0", properties: Self.quotaProperties)
        guard let root = resources.first(where: { paths.relation(ofHref: $0.href, to: .rootContainer) == .itself }) ?? resources.first,
              root.quotaUsedBytes != nil || root.quotaAvailableBytes != nil else { return nil }
        return Quota(usedBytes: root.quotaUsedBytes, availableBytes: root.quotaAvailableBytes)
    }

    // MARK: PROPFIND

    private func propfind(_ identifier: ItemIdentifier, isFolder: Bool, depth: String, properties: [String]) async throws -> [DAVResource] {
        try await propfind(identifier, isFolder: isFolder, depth: depth, properties: properties) { resources in
            var all: [DAVResource] = []
            try resources { all.append($0) }
            return all
        }
    }

    /// PROPFIND of `depth`, its 207 body parsed by `consume`, which gets a function that
    /// parses the body, handing each response to its argument.
    ///
    /// Depth 1 (a listing): the body goes to an unlinked temp file and is parsed from there as
    /// a stream while it arrives (`SpoolFollower`): a 100,000-entry listing (40 MB of XML)
    /// never sits in memory, and parsing overlaps the server's time producing the listing;
    /// `consume` runs on a thread of its own (it waits for the download; a large listing parses
    /// for seconds). Depth 0 (one item, asked after every upload whose time is set): the short
    /// answer is kept in memory and parsed here, without a temp file or a thread; an answer
    /// longer than a single item's can be (a server that ignored `Depth: 0`) is asked again
    /// the spooled way.
    private func propfind<T: Sendable>(_ identifier: ItemIdentifier, isFolder: Bool, depth: String, properties: [String],
                                       consume: @escaping @Sendable (_ resources: ((DAVResource) -> Void) throws -> Void) throws -> T) async throws -> T {
        let names: String = properties.map { $0.hasPrefix("F:") ? "<\($0)/>" : "<D:\($0)/>" }.joined()
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:propfind xmlns:D=\"DAV:\" xmlns:F=\"\(WebDAVModifiedTime.namespace)\">"
            + "<D:prop>\(names)</D:prop></D:propfind>\n"
        var request = CurlRequest(method: "PROPFIND", url: paths.url(for: identifier, isFolder: isFolder),
                                  headers: [CurlHeader("Depth", depth), CurlHeader("Content-Type", "application/xml; charset=utf-8")],
                                  body: Data(body.utf8), credentials: configuration.credentials)
        if depth == "0" {
            request.maxBodyBytes = Self.maxSingleItemAnswer
            do {
                let response = try await listingTransport.perform(request)
                try checkPropfindAnswer(response, identifier)
                let resources: [DAVResource]
                do {
                    resources = try Multistatus.parse(response.body)
                } catch {
                    throw errors.invalid("unreadable 207 multistatus: \(error.description)", method: "PROPFIND",
                                         path: identifier.rawValue, status: 207)
                }
                return try consume { each in resources.forEach(each) }
            } catch let t as TransportError where t.kind == .bodyTooLarge {
                request.maxBodyBytes = nil
                log.debug("a Depth: 0 PROPFIND answered more than one item's worth: asked again spooled",
                          metadata: ["remote": "\(remoteDescription)", "path": "\(identifier.rawValue)"])
            } catch let t as TransportError {
                throw errors.transport(t, method: "PROPFIND", path: identifier.rawValue)
            }
        }
        let spool = try SpoolFile(remote: remoteDescription, path: identifier.rawValue)
        defer { spool.close() }
        let follower = SpoolFollower(fd: spool.fd)
        let errors = self.errors
        // Only a 2xx body reaches the file; for any other answer the parse meets an empty
        // body, and its result is not used. Its own thread: it waits for the download.
        let parsing = Task {
            try await BlockingWork.runOnOwnThread {
                try consume { each in
                    var parseError: String?
                    do {
                        try Multistatus.parse(reading: follower.next, each: each)
                    } catch {
                        parseError = (error as? MultistatusError)?.description ?? "\(error)"
                    }
                    if let problem = follower.failure ?? parseError {
                        throw errors.invalid("unreadable 207 multistatus: \(problem)", method: "PROPFIND",
                                             path: identifier.rawValue, status: 207)
                    }
                }
            }
        }
        let response: CurlResponse
        do {
            response = try await listingTransport.download(request, into: spool.fd, at: 0, progress: { follower.grew(to: $0.upperBound) })
            follower.end()
        } catch {
            follower.end()
            _ = await parsing.result  // it reads the spool file: done before the file is closed
            throw errors.transport(error, method: "PROPFIND", path: identifier.rawValue)
        }
        let parsed = await parsing.result
        try checkPropfindAnswer(response, identifier)
        return try parsed.get()
    }

    /// The most bytes a Depth: 0 answer is read into memory: one item with its properties is
    /// well under 4 KiB on every server seen; a longer answer is a listing in disguise.
    static let maxSingleItemAnswer = 256 << 10

    /// Throws unless the answer is a 207; notes a server that hides dot names from listings.
    private func checkPropfindAnswer(_ response: CurlResponse, _ identifier: ItemIdentifier) throws {
        if response.headers["server"]?.lowercased().hasPrefix("nginx") == true, listingsHideDotNames.set() {
            log.notice("the server (nginx) leaves names starting with a dot out of its listings: such names are asked for one by one, and `ls` does not show those made elsewhere",
                       metadata: ["remote": "\(remoteDescription)"])
        }
        guard response.status == 207 else {
            // A 200 to PROPFIND is a server (or a proxy, or a login page) that does not speak
            // WebDAV at this URL: "PROPFIND failed: 200 OK" would help nobody.
            if (200..<300).contains(response.status) {
                throw errors.invalid("the answer was \(response.status) \(WebDAVErrors.reason(response.status)), not 207 Multi-Status: it does not speak WebDAV at this URL (a plain web server, a proxy or a login page?)",
                                     method: "PROPFIND", path: identifier.rawValue, status: response.status)
            }
            throw errors.status(response.status, method: "PROPFIND", path: identifier.rawValue, body: response.body)
        }
    }
}
