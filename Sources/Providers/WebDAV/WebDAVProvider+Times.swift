import Curl
import FavFSCore
import Foundation

/// Modification times set through the mount, kept at the server as a dead property
/// (`WebDAVModifiedTime`) so that `rsync -a` run again, or after a remount, finds the times it
/// set and sends nothing. Servers without dead properties (nginx's dav module, WsgiDAV without a
/// property manager) refuse the PROPPATCH: the core then keeps the time for as long as it runs
/// and the file stays that version (the log says so, once).
extension WebDAVProvider {
    public func setModified(_ id: ItemIdentifier, to time: Timestamp) async throws -> Item {
        guard !timesNotKept.value else { throw timesNotKeptError(id, "it refused to store them before") }
        // The version the time is bound to: the file as the server has it now.
        return try await setModified(id, to: time, current: try await item(for: id))
    }

    /// Binds the time to `current`'s version (an upload's answer: read by HEAD or PROPFIND, the
    /// version a listing shows) without a PROPFIND first. The PROPFIND after shows whether it
    /// held; another client's change since then shows there, and the time is bound again to
    /// the version there. Once the server was seen to keep a file's version when it stores a
    /// time, its answer that it stored one is taken without that read-back: another client's
    /// change in between then keeps the server's own time (ours was for our content), and the
    /// next listing shows that change as any other.
    public func setModified(_ id: ItemIdentifier, to time: Timestamp, current: Item) async throws -> Item {
        guard !timesNotKept.value else { throw timesNotKeptError(id, "it refused to store them before") }
        var current = current
        for _ in 0..<3 {
            let kept = WebDAVModifiedTime(time: time, version: current.version ?? "")
            let stored = try await proppatch(id, isFolder: current.kind == .folder, value: kept.propertyValue)
            // A file (a folder's version moves with its entries) on a server seen to keep the
            // version when it stores a time: its word is enough.
            if stored, current.kind == .file, storedTimesKeepVersion.value {
                var item = current
                item.modifiedTime = time
                return item
            }
            let after = try await single(id, isFolder: current.kind == .folder)
            if after.modifiedTime == time {
                if stored, current.kind == .file, after.version == current.version { storedTimesKeepVersion.set() }
                return after
            }
            // The same version without the time: the server did not keep it.
            guard after.version != current.version else {
                throw timesNotKeptError(id, "a time it was given did not come back in its listing")
            }
            // Another version: changed meanwhile (another client; a folder whose entries change
            // as files are uploaded into it, or, on Apache, whose first dead property makes its
            // property folder), or a server whose ETag changes with a PROPPATCH (properties
            // kept in the file's own metadata): once more, bound to the version it has now.
            current = after
        }
        // Still moving: this item, not the server, is why. Nothing is concluded about the server.
        throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue,
                            detail: "the time was not kept: the item kept changing at the server while it was set (now version \(current.version ?? "-"))")
    }

    /// Sets the property; true when the answer says the server stored it (a 2xx propstat
    /// naming it), false when it does not say (then only a read-back tells).
    private func proppatch(_ id: ItemIdentifier, isFolder: Bool, value: String) async throws -> Bool {
        let body = #"<?xml version="1.0" encoding="utf-8"?>"# + "\n"
            + #"<D:propertyupdate xmlns:D="DAV:" xmlns:F=""# + "\(WebDAVModifiedTime.namespace)" + #""><D:set><D:prop>"#
            + "<F:\(WebDAVModifiedTime.property)>\(Self.xmlEscaped(value))</F:\(WebDAVModifiedTime.property)>"
            + "</D:prop></D:set></D:propertyupdate>\n"
        let request = CurlRequest(method: "PROPPATCH", url: paths.url(for: id, isFolder: isFolder),
                                  headers: [CurlHeader("Content-Type", "application/xml; charset=utf-8")],
                                  body: Data(body.utf8), credentials: configuration.credentials,
                                  maxBodyBytes: Self.maxSingleItemAnswer)
        let response: CurlResponse
        do {
            response = try await transport.perform(request)
        } catch {
            throw errors.transport(error, method: "PROPPATCH", path: id.rawValue)
        }
        switch response.status {
        case 207:
            // A propstat may still say no (403, 409, 507 for the property): then, or when the
            // body is unreadable, the listing read back decides.
            let answer = try? Multistatus.parse(response.body)
            return answer?.contains { $0.keptModifiedNamed } ?? false
        case 200..<300:
            return false
        case 403, 405, 409, 422, 501:
            throw timesNotKeptError(id, "PROPPATCH: \(response.status) \(WebDAVErrors.reason(response.status))")
        default:
            throw errors.status(response.status, method: "PROPPATCH", path: id.rawValue, body: response.body)
        }
    }

    /// Remembers that the server keeps no times (the core says so in the log, once) and says so.
    private func timesNotKeptError(_ id: ItemIdentifier, _ why: String) -> ProviderError {
        timesNotKept.set()
        return ProviderError(.notSupported, remote: remoteDescription, path: id.rawValue,
                             detail: "this WebDAV server does not keep modification times set here (\(why))")
    }

    static func xmlEscaped(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(c)
            }
        }
        return out
    }
}
