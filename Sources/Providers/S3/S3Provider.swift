import Curl
import FavFSCore
import Foundation
import Logging

/// Amazon S3 and S3-compatible servers (`s3://bucket/prefix`): ListObjectsV2 listings in pages,
/// HEAD for metadata, ranged GETs pinned to the ETag, requests signed with SigV4 by libcurl.
///
/// S3 has keys, not folders: a folder is a key prefix ending in "/". It exists when a
/// zero-byte "name/" marker object exists (what `createFolder` makes, so empty folders list)
/// or any key lies below it.
public final class S3Provider: Provider {
    /// Where the bucket is, how to sign, and the paging and multipart sizes.
    public struct Configuration: Sendable {
        /// For messages: the s3:// form, without credentials.
        public var remoteDescription: String
        var addressing: S3Addressing
        public var region: String
        var credentials: S3Credentials?
        /// Keys per listing page (S3 caps it at 1,000).
        public var maxKeys: Int
        /// Files larger than this are uploaded in parts.
        public var multipartThreshold: Int64
        /// The size of each part but the last (S3: at least 5 MiB).
        public var partSize: Int64
        /// How many parts are sent at once.
        public var partConcurrency: Int

        init(remoteDescription: String, addressing: S3Addressing, region: String, credentials: S3Credentials?,
             maxKeys: Int = 1000, multipartThreshold: Int64 = 64 << 20, partSize: Int64 = 16 << 20, partConcurrency: Int = 4) {
            self.remoteDescription = remoteDescription
            self.addressing = addressing
            self.region = region
            self.credentials = credentials
            self.maxKeys = maxKeys
            self.multipartThreshold = multipartThreshold
            self.partSize = partSize
            self.partConcurrency = partConcurrency
        }
    }

    public let remoteDescription: String
    public var capabilities: ProviderCapabilities { [.rangedReads, .versions, .write, .rename, .delete, .createFolder, .serverSideCopy] }

    // Internal: the write side and multipart uploads (other files) use them too.
    let configuration: Configuration
    let transport: CurlTransport
    let addressing: S3Addressing
    let errors: S3Errors
    let log = Logger(label: "favfs.s3")

    /// The payload hash of an empty body (SHA-256 of nothing).
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    init(configuration: Configuration, transport: CurlTransport) {
        self.configuration = configuration
        self.transport = transport
        self.remoteDescription = configuration.remoteDescription
        self.addressing = configuration.addressing
        self.errors = S3Errors(remote: configuration.remoteDescription)
    }

    // MARK: requests

    /// A request signed with SigV4 by libcurl (when there are credentials).
    ///
    /// libcurl 7.88 signs `host`, `x-amz-date`, `content-type` and every `x-amz-*` header given,
    /// and takes the payload hash from `x-amz-content-sha256` when that header is set — it
    /// cannot hash a body it streams from a read callback. So every request carries that header:
    /// the empty-body hash where there is no body, `UNSIGNED-PAYLOAD` where there is one (S3
    /// accepts unsigned payloads over HTTP and HTTPS; the content is still protected by TLS and
    /// by S3's own checksum of the upload).
    func request(_ method: String, url: String, headers: [CurlHeader] = [], body: Data? = nil,
                 hasBody: Bool = false) -> CurlRequest {
        var all = headers
        let unsigned = hasBody || !(body?.isEmpty ?? true)
        // An in-memory body needs its own Content-Type: libcurl's default for it is a form type
        // (and S3 keeps an object's Content-Type).
        if body != nil && !headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            all.append(CurlHeader("Content-Type", "application/octet-stream"))
        }
        all.append(CurlHeader("x-amz-content-sha256", unsigned ? "UNSIGNED-PAYLOAD" : Self.emptyPayloadHash))
        var options: [CurlOption] = []
        var credentials: CurlCredentials?
        if let c = configuration.credentials {
            if let token = c.sessionToken { all.append(CurlHeader("x-amz-security-token", token)) }
            options.append(.awsSigV4("aws:amz:\(configuration.region):s3"))
            credentials = CurlCredentials(user: c.accessKeyId, password: c.secretAccessKey)
        }
        return CurlRequest(method: method, url: url, headers: all, body: body, credentials: credentials, options: options)
    }

    /// Performs a request with the body in memory; transport failures become `ProviderError`.
    func perform(_ request: CurlRequest, method: String, path: String) async throws -> CurlResponse {
        do {
            return try await transport.perform(request)
        } catch {
            throw errors.transport(error, method: method, path: path)
        }
    }

    // MARK: listing

    /// One ListObjectsV2 page of a folder (delimiter "/"): CommonPrefixes are folders, Contents
    /// files. The page token is S3's NextContinuationToken.
    public func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        let prefix = addressing.folderPrefix(folder)
        let listed = try await list(prefix: prefix, delimiter: "/", maxKeys: configuration.maxKeys,
                                    token: page?.token, path: folder.rawValue)
        if page == nil && !folder.isRoot && listed.objects.isEmpty && listed.commonPrefixes.isEmpty {
            // Nothing below the prefix, not even the folder's marker: there is no such folder.
            if (try? await head(folder)) != nil {
                throw ProviderError(.notAFolder, remote: remoteDescription, path: folder.rawValue,
                                    detail: "GET (list) found no folder: the path is a file")
            }
            throw ProviderError(.notFound, remote: remoteDescription, path: folder.rawValue,
                                detail: "GET (list) found no key below \(prefix)")
        }
        var result = S3Listing.page(from: listed, folder: folder, prefix: prefix, remote: remoteDescription, log: log)
        result.nextPage = listed.isTruncated ? listed.nextContinuationToken.map(Page.init) : nil
        if listed.isTruncated && result.nextPage == nil {
            throw errors.invalid("a truncated listing without NextContinuationToken", method: "GET (list)",
                                 path: folder.rawValue, status: 200)
        }
        return result
    }

    /// ListObjectsV2 with `encoding-type=url` (so keys with characters XML 1.0 cannot carry
    /// still list).
    func list(prefix: String, delimiter: String?, maxKeys: Int, token: String?, path: String) async throws -> S3ListPage {
        var query = [("list-type", "2"), ("encoding-type", "url"), ("max-keys", String(maxKeys)), ("prefix", prefix)]
        if let delimiter { query.append(("delimiter", delimiter)) }
        if let token { query.append(("continuation-token", token)) }
        let response = try await perform(request("GET", url: addressing.bucketURL(query: query)), method: "GET (list)", path: path)
        guard response.status == 200 else {
            throw errors.status(response.status, method: "GET (list)", path: path, body: response.body)
        }
        do {
            return try S3XML.parseList(response.body)
        } catch {
            throw errors.invalid("unreadable ListBucketResult: \(error)", method: "GET (list)", path: path, status: 200)
        }
    }

    // MARK: metadata

    /// HEAD of the file's key; when there is none, a one-key listing below "path/" tells
    /// whether a folder is there.
    public func item(for identifier: ItemIdentifier) async throws -> Item {
        if identifier.isRoot { return Item(identifier: identifier, kind: .folder) }
        if let file = try await head(identifier) { return file }
        if try await folderExists(identifier) { return Item(identifier: identifier, kind: .folder) }
        throw ProviderError(.notFound, remote: remoteDescription, path: identifier.rawValue, status: 404,
                            detail: "HEAD failed: 404 Not Found, and no key below \(addressing.folderPrefix(identifier))")
    }

    /// The file at `id` (HEAD), or nil on 404.
    func head(_ id: ItemIdentifier) async throws -> Item? {
        let path = id.rawValue
        let response = try await perform(request("HEAD", url: addressing.objectURL(addressing.fileKey(id))), method: "HEAD", path: path)
        switch response.status {
        case 200:
            return Item(identifier: id, kind: .file,
                        size: response.contentLength ?? response.headers["content-length"].flatMap { Int64($0) } ?? 0,
                        modified: response.headers["last-modified"].flatMap(S3Time.parseHTTP),
                        version: response.headers["etag"])
        case 404:
            return nil
        default:
            throw errors.status(response.status, method: "HEAD", path: path, body: response.body)
        }
    }

    /// Whether any key (a marker or content) lies below the folder's prefix.
    func folderExists(_ id: ItemIdentifier) async throws -> Bool {
        if id.isRoot { return true }
        let listed = try await list(prefix: addressing.folderPrefix(id), delimiter: nil, maxKeys: 1, token: nil, path: id.rawValue)
        return !listed.objects.isEmpty || !listed.commonPrefixes.isEmpty
    }

    // MARK: reading

    /// A ranged GET into the sink at the same offsets, pinned to the ETag with `If-Match`.
    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let path = item.identifier.rawValue
        if range.isEmpty { return range }
        var headers = [CurlHeader("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")]
        if let version = item.version { headers.append(CurlHeader("If-Match", version)) }
        let request = request("GET", url: addressing.objectURL(addressing.fileKey(item.identifier)), headers: headers)
        let result: (response: CurlResponse, writtenAt: Int64)
        do {
            result = try await transport.downloadRange(request, into: sink.fd, requestedStart: range.lowerBound)
        } catch {
            throw errors.transport(error, method: "GET", path: path)
        }
        let response = result.response
        if let written = try RangedGET.written(result, requested: range, invalid: { errors.invalid($0, method: "GET", path: path, status: 206) }) {
            return written
        }
        var meaning: [String: ProviderError.Kind] = [:]
        if item.version != nil { meaning["412"] = .versionChanged }
        var error = errors.status(response.status, method: "GET", path: path, body: response.body, meaning: meaning)
        if error.kind == .versionChanged {
            error.detail += " — the object changed since version \(item.version ?? "")"
        }
        throw error
    }
}
