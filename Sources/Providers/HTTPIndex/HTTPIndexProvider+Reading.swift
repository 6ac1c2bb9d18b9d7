import Curl
import FavFSCore
import Foundation

extension HTTPIndexProvider {
    /// A ranged GET into the sink at the same offsets, pinned to the item's version:
    /// - a strong ETag goes in `If-Match` (a change answers 412 before any byte is sent);
    /// - a size + Last-Modified version goes in `If-Unmodified-Since` (with HEAD metadata, exact
    ///   to the second), and the response's Content-Range total and Last-Modified are compared
    ///   with it, for servers that ignore preconditions (python's http.server).
    /// A server that ignores Range answers 200 with everything, written from offset 0 and
    /// reported as such.
    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let path = item.identifier.rawValue
        if range.isEmpty { return range }
        let pin = HTTPIndexVersion.pin(item.version)
        var headers = [CurlHeader("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")]
        switch pin {
        case .etag(let tag):
            headers.append(CurlHeader("If-Match", tag))
        case .sizeAndModified(_, let modified) where configuration.metadata == .head:
            headers.append(CurlHeader("If-Unmodified-Since", HTTPIndexVersion.httpDate(modified)))
        default:
            // A minute-floored mtime would make every If-Unmodified-Since fail: checked afterwards only.
            break
        }
        let request = CurlRequest(method: "GET", url: paths.url(for: item.identifier, isFolder: false), headers: headers,
                                  credentials: credentials())
        let result: (response: CurlResponse, writtenAt: Int64)
        do {
            result = try await transport.downloadRange(request, into: sink.fd, requestedStart: range.lowerBound)
        } catch {
            throw errors.transport(error, method: "GET", path: path)
        }
        let response = result.response
        if [200, 206, 416].contains(response.status),
           let why = HTTPIndexVersion.mismatch(pin, response: response, metadata: configuration.metadata) {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: response.status,
                                detail: "GET: the file changed on the server (\(why))")
        }
        if let written = try RangedGET.written(result, requested: range, invalid: { errors.invalid($0, method: "GET", path: path, status: 206) }) {
            return written
        }
        switch response.status {
        case 412:
            throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: 412,
                                detail: "GET: the file changed on the server (412 Precondition Failed)")
        case 301, 302, 303, 307, 308:
            throw ProviderError(.isAFolder, remote: remoteDescription, path: path, status: response.status,
                                detail: "GET: redirected to \(response.headers["location"] ?? "elsewhere") (a folder?)")
        default:
            throw errors.status(response.status, method: "GET", path: path, body: response.body)
        }
    }
}
