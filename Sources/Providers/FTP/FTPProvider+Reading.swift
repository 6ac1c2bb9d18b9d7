import Curl
import FavFSCore
import Foundation

/// Ranged reads: REST + RETR into the sink at the bytes' own offsets.
///
/// FTP has no conditional read, so a read pinned to a version compares it with the file's MLST
/// facts in the same connection, right before RETR (a QUOTE command), and — when the read runs
/// to the end of the file — right after it (POSTQUOTE). Either differing gives `.versionChanged`.
/// A read that stops before the end is aborted by libcurl (ABOR, the connection is closed), so
/// it has no check after: a change made while its bytes flow is not seen (the window is the
/// transfer itself, and only for writers that rewrite a file in place; favfs's own uploads
/// replace by rename, which leaves a running RETR on the old content). On a server without MLST
/// the check is the parent's LIST, before the read only, with LIST's minute precision.
extension FTPProvider {
    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let path = item.identifier.rawValue
        if range.isEmpty { return range }
        if let problem = FTPPaths.unsendable(path) { throw ProviderError(.invalidName, remote: remoteDescription, path: path, detail: problem) }
        let serverPath = paths.serverPath(item.identifier)
        let machineListings = try await features().machineListings
        var options: [CurlOption] = []
        // To the end of the file when the range reaches it: no ABOR, the connection is kept.
        let toEnd = item.version != nil && range.upperBound >= item.size
        if range.lowerBound > 0 || !toEnd {
            options.append(.range(toEnd ? "\(range.lowerBound)-" : "\(range.lowerBound)-\(range.upperBound - 1)"))
        }
        if let version = item.version {
            if machineListings {
                options.append(.quote(["MLST \(serverPath)"]))
                if toEnd { options.append(.postQuote(["MLST \(serverPath)"])) }
            } else {
                try await requireUnchanged(item.identifier, version: version, command: "RETR")
            }
        }
        let response: CurlResponse
        do {
            response = try await transport.download(request(paths.url(for: item.identifier, isFolder: false), options),
                                                    into: sink.fd, at: range.lowerBound)
        } catch let error as TransportError where error.code == 36 {
            // CURLE_BAD_DOWNLOAD_RESUME: the range starts past the end of the file.
            if let version = item.version, machineListings {
                try checkVersions(FTPReply.mlstEntries(error.replyLines), version: version, path: path)
            }
            return range.lowerBound..<range.lowerBound
        } catch {
            throw errors.transport(error, command: "RETR", path: path)
        }
        if let version = item.version, machineListings {
            let seen = FTPReply.mlstEntries(response.replyLines)
            guard !seen.isEmpty else {
                throw errors.invalid("no fact line in the MLST reply before RETR", command: "RETR", path: path)
            }
            try checkVersions(seen, version: version, path: path)
        }
        return range.lowerBound..<(range.lowerBound + response.bytesWritten)
    }

    /// Throws `.versionChanged` unless every MLST seen around the read shows `version`.
    private func checkVersions(_ entries: [FTPEntry], version: String, path: String) throws {
        for entry in entries where entry.version != version {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: path,
                                detail: "RETR refused: the file changed on the server (now \(entry.version ?? "not a file"), read for version \(version))")
        }
    }

    /// Throws `.versionChanged` unless the item's current version (from `item(for:)`) is `version`.
    func requireUnchanged(_ id: ItemIdentifier, version: String, command: String) async throws {
        guard let current = try await existing(id) else {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue,
                                detail: "\(command) refused: the file is no longer there (base version \(version))")
        }
        guard current.kind == .file, current.version == version else {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue,
                                detail: "\(command) refused: the file changed on the server (now \(current.version ?? "not a file"), base version \(version))")
        }
    }
}
