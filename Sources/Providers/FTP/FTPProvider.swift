import Curl
import FavFSCore
import Foundation
import Logging
import Synchronization

/// FTP and FTPS (explicit TLS) through libcurl: MLSD listings (LIST where the server has none),
/// MLST for one item, REST+RETR ranged reads pinned to a synthetic version (size, mtime, unique).
public final class FTPProvider: Provider {
    /// Where the remote is, how to log in and how to protect the connection.
    public struct Configuration: Sendable {
        /// `ftp://host:port` (FTPS too: TLS is asked for with `useTLS`).
        public var origin: String
        /// The remote's folder, absolute on the server ("/" for the root).
        public var basePath: String
        /// For messages: the ftp:// or ftps:// form, without credentials.
        public var remoteDescription: String
        /// nil: anonymous.
        public var credentials: CurlCredentials?
        /// AUTH TLS on the control connection and PROT P on data connections, required.
        public var useTLS: Bool
        /// A PEM file of CAs to verify the server's certificate with (instead of the system's).
        public var caCertificate: String?

        public init(origin: String, basePath: String, remoteDescription: String, credentials: CurlCredentials?,
                    useTLS: Bool = false, caCertificate: String? = nil) {
            self.origin = origin; self.basePath = basePath; self.remoteDescription = remoteDescription
            self.credentials = credentials; self.useTLS = useTLS; self.caCertificate = caCertificate
        }
    }

    public let remoteDescription: String
    public var capabilities: ProviderCapabilities { [.write, .rename, .delete, .createFolder, .rangedReads, .partialReadsCostAConnection, .connectionsCostALogin] }

    // Internal: the write side (FTPProvider+Writing.swift) uses them too.
    let configuration: Configuration
    let transport: CurlTransport
    let paths: FTPPaths
    let errors: FTPErrors
    let featureCache = FTPFeatureCache()
    /// Whether `LIST -a` is a listing with dot names here (nil: not known yet).
    let listsAll = Mutex<Bool?>(nil)
    /// Whether SIZE and MDTM check reads here (FTPSizeAndTime); false once they disagreed
    /// with a LIST that showed the same version (MDTM and LIST in different time zones).
    let sizeAndTimeAgreeWithLIST = Mutex<Bool>(true)
    let log = Logger(label: "favfs.ftp")

    /// The prefix of upload temporaries (`STOR` goes there first, then `RNTO` into place):
    /// never listed as items.
    static let temporaryPrefix = ".favfs-upload-"

    /// A provider for one remote; `transport` may be shared with other providers.
    public init(configuration: Configuration, transport: CurlTransport) {
        self.configuration = configuration
        self.transport = transport
        self.remoteDescription = configuration.remoteDescription
        self.paths = FTPPaths(origin: configuration.origin, basePath: configuration.basePath)
        self.errors = FTPErrors(remote: configuration.remoteDescription)
    }

    // MARK: requests

    /// A request with the remote's credentials, passive mode on the control host and TLS options.
    func request(_ url: String, _ options: [CurlOption]) -> CurlRequest {
        var all: [CurlOption] = [.ftpSkipPasvIP(true), .ftpFileMethod(3)]
        // TLS 1.2: over 1.3, libcurl loses the tail of uploads (see CurlOption.tlsAtMost12).
        if configuration.useTLS { all += [.useSSL(.all), .tlsAtMost12] }
        if let ca = configuration.caCertificate { all.append(.caInfo(ca)) }
        return CurlRequest(method: "GET", url: url, credentials: configuration.credentials, options: all + options)
    }

    /// Runs FTP commands (QUOTE, no transfer) and returns the control-connection replies.
    /// A refused command ends the sequence with an error (mapped from its reply); a command
    /// starting with `*` may fail without that.
    func commands(_ lines: [String], command: String, path: String) async throws -> [String] {
        do {
            return try await transport.perform(request(paths.commandURL, [.quote(lines), .noBody])).replyLines
        } catch {
            throw errors.transport(error, command: command, path: path)
        }
    }

    /// What the server can do: FEAT, once per remote (concurrent first callers share the answer).
    func features() async throws -> FTPFeatures {
        try await featureCache.get {
            // "*": a server without FEAT answers 500, which is an answer (no features), not a failure.
            let lines = try await self.commands(["*FEAT"], command: "FEAT", path: "/")
            return FTPFeatures.parse(lines)
        }
    }

    // MARK: listing

    /// Lists a folder with MLSD (LIST where the server lacks it). One listing, no pages.
    public func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        if let page {
            throw ProviderError(.notSupported, remote: remoteDescription, path: folder.rawValue,
                                detail: "FTP listings have no pages; got page token \(page.token)")
        }
        let entries = try await list(folder)
        var items: [Item] = []
        var skipped: [(name: String, problem: ItemNameProblem)] = []
        for entry in entries {
            if case .selfOrParent = entry.kind { continue }
            if entry.name.hasPrefix(Self.temporaryPrefix) { continue }
            if let problem = ItemIdentifier.validate(name: entry.name) {
                log.warning("skipping an entry whose name cannot be served", metadata: [
                    "remote": "\(remoteDescription)", "folder": "\(folder.rawValue)", "name": "\(entry.name)", "problem": "\(problem.rawValue)",
                ])
                skipped.append((entry.name, problem))
                continue
            }
            if let item = entry.item(folder.child(entry.name)) { items.append(item) }
        }
        return EnumerationPage(items: items, skipped: skipped)
    }

    /// The raw entries of a folder: MLSD, or LIST on a server without machine listings.
    func list(_ folder: ItemIdentifier) async throws -> [FTPEntry] {
        let path = folder.rawValue
        if let problem = FTPPaths.unsendable(path) { throw ProviderError(.invalidName, remote: remoteDescription, path: path, detail: problem) }
        if try await features().machineListings {
            do {
                let response = try await transport.perform(listingRequest(folder, command: "MLSD"))
                return FTPMachineListing.parse(response.body)
            } catch let error as TransportError where FTPReply.group(error.replyLines).last.map({ [500, 502].contains($0.code) }) == true {
                // FEAT promised MLST but MLSD is not understood: remember, and use LIST from now on.
                log.notice("the server lists MLST in FEAT but refuses MLSD; using LIST", metadata: ["remote": "\(remoteDescription)"])
                var known = try await features()
                known.machineListings = false
                await featureCache.set(known)
            } catch {
                throw errors.transport(error, command: "MLSD", path: path)
            }
        }
        if listsAll.withLock({ $0 }) == true {
            do {
                return FTPListing.parse(try await transport.perform(listingRequest(folder, command: "LIST -a")).body)
            } catch {
                throw errors.transport(error, command: "LIST -a", path: path)
            }
        }
        let plain: [FTPEntry]
        do {
            plain = FTPListing.parse(try await transport.perform(listingRequest(folder, command: "LIST")).body)
        } catch {
            throw errors.transport(error, command: "LIST", path: path)
        }
        return try await withDotNames(folder, plain)
    }

    /// vsftpd (by default) leaves names starting with a dot out of LIST, unless asked with
    /// `LIST -a` — which another server may take for a name to list. So `LIST -a` is trusted
    /// once it listed a folder with everything plain LIST did (and no entry called "-a"),
    /// and given up once it did not; until a non-empty folder decided, both are asked.
    private func withDotNames(_ folder: ItemIdentifier, _ plain: [FTPEntry]) async throws -> [FTPEntry] {
        guard listsAll.withLock({ $0 }) != false else { return plain }
        let all: [FTPEntry]
        do {
            all = FTPListing.parse(try await transport.perform(listingRequest(folder, command: "LIST -a")).body)
        } catch let error as TransportError where FTPReply.group(error.replyLines).last.map({ (400..<600).contains($0.code) }) == true {
            listsAll.withLock { $0 = false }
            return plain
        } catch {
            throw errors.transport(error, command: "LIST -a", path: folder.rawValue)
        }
        let names = Set(all.map(\.name))
        guard !names.contains("-a"), plain.allSatisfy({ names.contains($0.name) }) else {
            listsAll.withLock { $0 = false }
            log.notice("the server does not take LIST -a; names starting with a dot it leaves out of listings stay unseen",
                       metadata: ["remote": "\(remoteDescription)"])
            return plain
        }
        if !plain.isEmpty { listsAll.withLock { $0 = true } }
        return all
    }

    /// `MLSD`/`LIST` after libcurl's CWD into the folder (the usual way, which every server
    /// knows); with the path as the command's argument where libcurl refuses it in a URL.
    private func listingRequest(_ folder: ItemIdentifier, command: String) -> CurlRequest {
        let serverPath = paths.serverPath(folder)
        if FTPPaths.fitsInURL(serverPath) {
            return request(paths.url(for: folder, isFolder: true), [.customRequest(command)])
        }
        return request(paths.commandFolderURL, [.customRequest("\(command) \(serverPath)")])
    }

    // MARK: one item

    /// MLST on the item's path; on a server without it, the entry in its parent's LIST.
    public func item(for identifier: ItemIdentifier) async throws -> Item {
        let path = identifier.rawValue
        if let problem = FTPPaths.unsendable(path) { throw ProviderError(.invalidName, remote: remoteDescription, path: path, detail: problem) }
        if try await features().machineListings {
            let lines = try await commands(["MLST \(paths.serverPath(identifier))"], command: "MLST", path: path)
            guard let entry = FTPReply.mlstEntries(lines).last else {
                throw errors.invalid("no fact line in the MLST reply (\(FTPReply.group(lines).last?.text ?? "nothing"))", command: "MLST", path: path)
            }
            var item = entry.item(identifier) ?? Item(identifier: identifier, kind: .folder)
            // MLST of a folder may call it cdir (itself).
            if case .selfOrParent = entry.kind { item.kind = .folder }
            return item
        }
        guard let parent = identifier.parent else {
            // The root of a LIST-only server: it is a folder if it can be listed.
            _ = try await list(identifier)
            return Item(identifier: identifier, kind: .folder)
        }
        let entries = try await list(parent)
        if let entry = entries.first(where: { $0.name == identifier.name }), let item = entry.item(identifier) { return item }
        // vsftpd (by default) leaves dot files out of LIST, also the upload's own temporary:
        // asked for by name, it lists them.
        if identifier.name.hasPrefix("."), let entry = try await listOne(identifier), let item = entry.item(identifier) { return item }
        throw ProviderError(.notFound, remote: remoteDescription, path: path, status: 226,
                            detail: "LIST of \(parent.rawValue) has no entry named '\(identifier.name)'")
    }

    /// `LIST PATH` of one file, for a name the folder's LIST hides; nil when the answer has no
    /// file of that name (a folder's LIST lists its children, never itself).
    private func listOne(_ identifier: ItemIdentifier) async throws -> FTPEntry? {
        let path = identifier.rawValue
        let response: CurlResponse
        do {
            response = try await transport.perform(request(paths.commandFolderURL, [.customRequest("LIST \(paths.serverPath(identifier))")]))
        } catch let error as TransportError where FTPReply.group(error.replyLines).last.map({ (500..<600).contains($0.code) }) == true {
            return nil
        } catch {
            throw errors.transport(error, command: "LIST", path: path)
        }
        let entries = FTPListing.parse(response.body).filter { if case .file = $0.kind { return true } else { return false } }
        // Servers print the name as asked (the whole path) or only its last part.
        return entries.count == 1 && [identifier.name, paths.serverPath(identifier)].contains(entries[0].name) ? entries[0] : nil
    }

    /// The item, or nil where there is none (for preconditions and error diagnosis).
    func existing(_ identifier: ItemIdentifier) async throws -> Item? {
        do {
            return try await item(for: identifier)
        } catch let error as ProviderError where error.kind == .notFound {
            return nil
        }
    }
}

/// FEAT's answer, asked once per remote: the first caller asks, concurrent callers wait for it.
actor FTPFeatureCache {
    private var known: FTPFeatures?
    private var asking: Task<FTPFeatures, Error>?

    func get(_ ask: @escaping @Sendable () async throws -> FTPFeatures) async throws -> FTPFeatures {
        if let known { return known }
        if let asking { return try await asking.value }
        let task = Task { try await ask() }
        asking = task
        defer { asking = nil }
        let features = try await task.value
        if known == nil { known = features }
        return known!
    }

    func set(_ features: FTPFeatures) { known = features }
}
