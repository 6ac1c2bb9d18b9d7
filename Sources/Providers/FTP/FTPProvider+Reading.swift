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
/// it is SIZE and MDTM in the same way (FTPSizeAndTime), with LIST's minute precision, and the
/// parent's LIST where the server has no SIZE or MDTM or they disagree with LIST.
///
/// A read that starts at or past the end of the file is answered from the stat, without RETR:
/// libcurl would open a data connection and leave it unused, which desynchronizes some servers'
/// replies on the reused control connection.
extension FTPProvider {
    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let path = item.identifier.rawValue
        if range.isEmpty { return range }
        if let problem = FTPPaths.unsendable(path) { throw ProviderError(.invalidName, remote: remoteDescription, path: path, detail: problem) }
        let serverPath = paths.serverPath(item.identifier)
        let features = try await features()
        let machineListings = features.machineListings
        // Without MLST: checked by SIZE and MDTM in the read's own connection where they serve.
        let facts = !machineListings && features.sizeAndTime && range.lowerBound < item.size && FTPPaths.fitsInURL(serverPath)
            && sizeAndTimeAgreeWithLIST.withLock { $0 } ? item.version.flatMap(FTPSizeAndTime.init(version:)) : nil
        // Where the file ends, when a stat had to be made anyway.
        var knownSize: Int64?
        if let version = item.version {
            if (!machineListings && facts == nil) || range.lowerBound >= item.size {
                knownSize = try await requireUnchanged(item.identifier, version: version, command: "RETR").size
            }
        } else if range.lowerBound > 0 {
            knownSize = try await self.item(for: item.identifier).size
        }
        if let knownSize, range.lowerBound >= knownSize { return range.lowerBound..<range.lowerBound }

        let pinnedByMLST = item.version != nil && machineListings && knownSize == nil
        if !FTPPaths.fitsInURL(serverPath) {
            return try await readWhole(item, serverPath: serverPath, machineListings: machineListings, pinnedByMLST: pinnedByMLST, into: sink)
        }
        var options: [CurlOption] = []
        // To the end of the file when the range reaches it: no ABOR, the connection is kept.
        let toEnd = item.version != nil && range.upperBound >= (knownSize ?? item.size)
        if range.lowerBound > 0 || !toEnd {
            options.append(.range(toEnd ? "\(range.lowerBound)-" : "\(range.lowerBound)-\(range.upperBound - 1)"))
        }
        if pinnedByMLST {
            options.append(.quote(["MLST \(serverPath)"]))
            if toEnd { options.append(.postQuote(["MLST \(serverPath)"])) }
        }
        if facts != nil {
            options.append(.quote(FTPSizeAndTime.commands(serverPath)))
            if toEnd { options.append(.postQuote(FTPSizeAndTime.commands(serverPath))) }
        }
        // A whole file whose size our own commands check before and after: libcurl's SIZE of
        // its own before RETR would be a round trip per file for nothing. A transfer cut short
        // is then seen by the caller (fewer bytes than the file's size), not by libcurl.
        if range.lowerBound == 0 && toEnd && (facts != nil || pinnedByMLST) { options.append(.ignoreContentLength) }
        let response: CurlResponse
        do {
            response = try await transport.download(request(paths.url(for: item.identifier, isFolder: false), options),
                                                    into: sink.fd, at: range.lowerBound)
        } catch let error as TransportError where error.code == 36 {
            // CURLE_BAD_DOWNLOAD_RESUME: the file shrank below the range's start since the stat.
            if let version = item.version, pinnedByMLST {
                try checkVersions(FTPReply.mlstEntries(error.replyLines), version: version, path: path)
            }
            if let version = item.version, facts != nil { try await requireUnchanged(item.identifier, version: version, command: "RETR") }
            return range.lowerBound..<range.lowerBound
        } catch {
            // Failed after a check that did not show the version (the file gone, changed, or no
            // longer a file): as when LIST came first, a file that changed is `.versionChanged`,
            // whatever else went wrong.
            if let facts, let version = item.version, let t = error as? TransportError, t.kind != .cancelled,
               !facts.agrees(with: t.replyLines, times: 1) {
                try await requireUnchanged(item.identifier, version: version, command: "RETR")
            }
            throw errors.transport(error, command: "RETR", path: path)
        }
        if let facts, let version = item.version, !facts.agrees(with: response.replyLines, times: toEnd ? 2 : 1) {
            // Changed, or MDTM and LIST do not agree here: LIST decides, and then alone.
            try await requireUnchanged(item.identifier, version: version, command: "RETR")
            sizeAndTimeAgreeWithLIST.withLock { $0 = false }
            log.notice("SIZE and MDTM disagree with LIST for an unchanged file; reads are checked by LIST",
                       metadata: ["remote": "\(remoteDescription)", "path": "\(path)"])
        }
        if let version = item.version, pinnedByMLST {
            let seen = FTPReply.mlstEntries(response.replyLines)
            guard !seen.isEmpty else {
                throw errors.invalid("no fact line in the MLST reply before RETR", command: "RETR", path: path)
            }
            try checkVersions(seen, version: version, path: path)
        }
        return range.lowerBound..<(range.lowerBound + response.bytesWritten)
    }

    /// A file whose path libcurl refuses in a URL (a control character such as a tab): the whole
    /// file with `RETR <path>` sent as a listing command, written from offset 0. libcurl sends
    /// listings in ASCII mode (`TYPE A`); a server that converts line endings then would change
    /// the bytes, which the size check below turns into an error instead of wrong content.
    private func readWhole(_ item: Item, serverPath: String, machineListings: Bool, pinnedByMLST: Bool, into sink: ContentSink) async throws -> Range<Int64> {
        let path = item.identifier.rawValue
        var options: [CurlOption] = [.customRequest("RETR \(serverPath)")]
        if machineListings { options += [.quote(["MLST \(serverPath)"]), .postQuote(["MLST \(serverPath)"])] }
        let response: CurlResponse
        do {
            response = try await transport.download(request(paths.commandFolderURL, options), into: sink.fd, at: 0)
        } catch {
            throw errors.transport(error, command: "RETR", path: path)
        }
        let seen = FTPReply.mlstEntries(response.replyLines)
        if let version = item.version, pinnedByMLST { try checkVersions(seen, version: version, path: path) }
        if let size = seen.first?.size, size != response.bytesWritten {
            throw errors.invalid("got \(response.bytesWritten) bytes of a \(size)-byte file (converted in ASCII mode?)", command: "RETR", path: path)
        }
        return 0..<response.bytesWritten
    }

    /// Throws `.versionChanged` unless every MLST seen around the read shows `version`.
    private func checkVersions(_ entries: [FTPEntry], version: String, path: String) throws {
        for entry in entries where entry.version != version {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: path,
                                detail: "RETR refused: the file changed on the server (now \(entry.version ?? "not a file"), read for version \(version))")
        }
    }

    /// The item's current state; `.versionChanged` unless it is the file at `version`.
    @discardableResult
    func requireUnchanged(_ id: ItemIdentifier, version: String, command: String) async throws -> Item {
        guard let current = try await existing(id) else {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue,
                                detail: "\(command) refused: the file is no longer there (base version \(version))")
        }
        guard current.kind == .file, current.version == version else {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue,
                                detail: "\(command) refused: the file changed on the server (now \(current.version ?? "not a file"), base version \(version))")
        }
        return current
    }
}
