import Curl
import FavFSCore
import Foundation
import Logging

/// The Favart media API (DESIGN.md, "The Favart media API"): JSON listings of images and
/// folders, ranged GETs of files, previews, and simple writes. No authentication, no paging,
/// no versions, no mtimes in listings.
///
/// Versions are synthetic, from the size alone (`FavartVersion`): the same string whether an
/// item comes from a listing, `item(for:)` or an upload. `Last-Modified` is only sent with file
/// bytes; asking for it per item would cost one request per file of every listing (measured on
/// the fixture: 1,000 files took 6.6 s of ranged GETs, 8 in parallel, against 0.02 s for the
/// listing), so reads use it instead to notice same-size edits (`FavartReadPins`). `modified`
/// is always nil.
public final class FavartProvider: Provider {
    /// Where the remote is.
    public struct Configuration: Sendable {
        /// `http://host:port` or `https://host:port`.
        public var baseURL: String
        /// The folder below the media root that is the remote's root ("" or "/" for all of it).
        public var rootFolder: String
        /// For messages: the favart:// form.
        public var remoteDescription: String
        public init(baseURL: String, rootFolder: String = "", remoteDescription: String) {
            self.baseURL = baseURL; self.rootFolder = rootFolder; self.remoteDescription = remoteDescription
        }
    }

    /// The API refuses larger uploads (400, leaving the existing file empty); favfs refuses
    /// writes past it (EFBIG) and never sends such an upload.
    public static let maxUploadSize: Int64 = 25 * 1024 * 1024

    public let remoteDescription: String
    public var capabilities: ProviderCapabilities { [.write, .delete, .createFolder, .rangedReads, .thumbnails] }

    // Internal, not private: the write side and thumbnails (other files) use them too.
    let configuration: Configuration
    let transport: CurlTransport
    let urls: FavartURLs
    let errors: FavartErrors
    let pins = FavartReadPins()
    let log = Logger(label: "favfs.favart")

    /// A provider for one remote; `transport` may be shared with other providers.
    public init(configuration: Configuration, transport: CurlTransport) {
        self.configuration = configuration
        self.transport = transport
        self.remoteDescription = configuration.remoteDescription
        self.urls = FavartURLs(baseURL: configuration.baseURL, rootFolder: configuration.rootFolder)
        self.errors = FavartErrors(remote: configuration.remoteDescription)
    }

    // MARK: listing

    /// One `GET /media`: the API has no paging, so `nextPage` is nil.
    public func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        if let page {
            // Never issued by this provider: a caller mixed up providers.
            throw ProviderError(.notSupported, remote: remoteDescription, path: folder.rawValue,
                                detail: "Favart listings have no pages; got page token \(page.token)")
        }
        let entries = try await list(folder)
        return FavartListing.page(entries, folder: folder, remote: remoteDescription, log: log)
    }

    /// There is no stat request: the root is a folder, anything else is found in its parent's
    /// listing (a missing parent is `.notFound` too).
    public func item(for identifier: ItemIdentifier) async throws -> Item {
        guard let parent = identifier.parent else {
            return Item(identifier: .rootContainer, kind: .folder)
        }
        if let entry = try await entry(identifier, in: parent) {
            return FavartListing.item(entry, in: parent)
        }
        throw ProviderError(.notFound, remote: remoteDescription, path: identifier.rawValue, status: 200,
                            detail: "GET /media: no entry '\(identifier.name)' in \(parent.rawValue)")
    }

    /// The raw entries of a folder.
    func list(_ folder: ItemIdentifier) async throws -> [FavartEntry] {
        let request = CurlRequest(method: "GET", url: urls.media(folder: folder))
        let response: CurlResponse
        do {
            response = try await transport.perform(request)
        } catch {
            throw errors.transport(error, request: "GET /media", path: folder.rawValue)
        }
        guard response.status == 200 else {
            // The real server answers 500 for a folder that does not exist: its parent's listing
            // tells that apart from a failing server.
            if response.status == 500, let parent = folder.parent, await isMissing(folder, in: parent) {
                throw ProviderError(.notFound, remote: remoteDescription, path: folder.rawValue, status: 500,
                                    detail: "GET /media: there is no folder \(folder.rawValue) (the server answered 500, and its parent does not list it)")
            }
            throw errors.status(response.status, request: "GET /media", path: folder.rawValue, body: response.body)
        }
        do {
            return try FavartListing.parse(response.body)
        } catch {
            throw errors.invalid("\(error)", request: "GET /media", path: folder.rawValue, status: 200)
        }
    }

    /// Whether `folder` is absent from `parent` (or `parent` itself is absent); false when the
    /// server cannot tell.
    func isMissing(_ folder: ItemIdentifier, in parent: ItemIdentifier) async -> Bool {
        do {
            return !(try await list(parent)).contains { $0.name.utf8.elementsEqual(folder.name.utf8) }
        } catch let error as ProviderError where error.kind == .notFound {
            return true
        } catch {
            return false
        }
    }

    /// The entry named like `id` in `parent`'s listing, compared byte for byte (two names that
    /// differ only in Unicode normalization are two files on the server); nil when absent.
    func entry(_ id: ItemIdentifier, in parent: ItemIdentifier) async throws -> FavartEntry? {
        let entries: [FavartEntry]
        do {
            entries = try await list(parent)
        } catch let error as ProviderError where error.kind == .notFound {
            var e = error
            e.path = id.rawValue
            e.detail = "its folder is not there: " + error.detail
            throw e
        }
        return entries.first { $0.name.utf8.elementsEqual(id.name.utf8) }
    }

    // MARK: reading

    /// A ranged `GET /file` into the sink at the same offsets. The API has no `If-Match`, so the
    /// version is checked from the answer: the total in `Content-Range` must be the version's
    /// size, and `Last-Modified` the one this version was first read with. A mismatch is
    /// `.versionChanged`; bytes of that answer may already be in the sink, and the caller
    /// discards them with the rest of that version's content.
    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let path = item.identifier.rawValue
        if range.isEmpty { return range }
        let request = CurlRequest(method: "GET", url: urls.file(item.identifier),
                                  headers: [CurlHeader("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")])
        let result: (response: CurlResponse, writtenAt: Int64)
        do {
            result = try await transport.downloadRange(request, into: sink.fd, requestedStart: range.lowerBound)
        } catch {
            throw errors.transport(error, request: "GET /file", path: path)
        }
        let response = result.response
        switch response.status {
        case 206:
            try verify(item, total: Self.contentRangeTotal(response.headers["content-range"]), response: response)
            guard result.writtenAt == range.lowerBound || response.bytesWritten == 0 else {
                throw errors.invalid("asked for bytes from \(range.lowerBound), got Content-Range \(response.headers["content-range"] ?? "none")",
                                     request: "GET /file", path: path, status: 206)
            }
            return result.writtenAt..<(result.writtenAt + response.bytesWritten)
        case 200:
            // The server ignored Range and sent everything, written from offset 0.
            try verify(item, total: response.bytesWritten, response: response)
            return 0..<response.bytesWritten
        case 416:
            // Nothing at or after the start: the file ends there (or it shrank: the total says).
            try verify(item, total: Self.contentRangeTotal(response.headers["content-range"]), response: response)
            return range.lowerBound..<range.lowerBound
        default:
            throw errors.status(response.status, request: "GET /file", path: path, body: response.body)
        }
    }

    /// Throws `.versionChanged` when an answer shows another version than `item.version`.
    private func verify(_ item: Item, total: Int64?, response: CurlResponse) throws {
        guard let version = item.version else { return }
        let path = item.identifier.rawValue
        if let expected = FavartVersion.size(of: version), let total, total != expected {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: response.status,
                                detail: "GET /file: the file is \(total) bytes now, \(expected) when listed; it changed on the server")
        }
        if let lastModified = response.headers["last-modified"],
           !pins.check(path: path, version: version, lastModified: lastModified) {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: response.status,
                                detail: "GET /file: Last-Modified is \(lastModified) now, another value when this version was read before; it changed on the server")
        }
    }

    /// `bytes 0-99/1000` or `bytes */1000` → 1000; nil when absent or `*`.
    static func contentRangeTotal(_ value: String?) -> Int64? {
        guard let value, let slash = value.lastIndex(of: "/") else { return nil }
        return Int64(value[value.index(after: slash)...].trimmingCharacters(in: .whitespaces))
    }
}
