// CONTRACT STUB — replaced by the WebDAV provider implementation.
import FavFSCore
import Curl

/// WebDAV over HTTP(S): PROPFIND Depth 1 listings, ranged GETs pinned to the ETag.
public final class WebDAVProvider: Provider {
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
    public var capabilities: ProviderCapabilities { [.rangedReads, .versions, .quota] }
    public init(configuration: Configuration, transport: CurlTransport) { fatalError("stub") }
    public func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage { fatalError("stub") }
    public func item(for identifier: ItemIdentifier) async throws -> Item { fatalError("stub") }
    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> { fatalError("stub") }
    public func quota() async throws -> Quota? { fatalError("stub") }
}
