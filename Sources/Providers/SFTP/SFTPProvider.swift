import Curl
import FavFSCore
import Foundation
import Logging

/// SFTP through libcurl (libssh2): long listings plus an exact stat per entry, ranged reads
/// pinned to size + mtime, and writes as quote commands (`rename`, `rm`, `mkdir`, ...).
///
/// Host keys are always checked against a known_hosts file: an unknown or changed key is an
/// error that says which, never accepted silently.
public final class SFTPProvider: Provider {
    /// Where the server is, how to log in, how to check its host key.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int?
        public var user: String
        /// The remote's root on the server, absolute (`/srv/files`).
        public var rootPath: String
        /// For messages: the sftp:// URL without credentials.
        public var remoteDescription: String
        /// The private key file (OpenSSH or PEM format); nil: password only.
        public var privateKey: String?
        public var keyPassphrase: String?
        /// The password; nil: public key only.
        public var password: String?
        /// The known_hosts file the host key must be in.
        public var knownHosts: String
        /// The same, as the user would write it (`~/.ssh/known_hosts`), for messages.
        public var knownHostsDisplay: String
        /// The server's time zone: long listings show local times (used for symlinks' mtimes).
        public var timeZone: TimeZone
        /// Stats in flight at once while listing (libcurl spreads them over its connections).
        public var statConcurrency: Int

        public init(host: String, port: Int?, user: String, rootPath: String, remoteDescription: String,
                    privateKey: String?, keyPassphrase: String?, password: String?, knownHosts: String,
                    knownHostsDisplay: String? = nil, timeZone: TimeZone = TimeZone(identifier: "UTC")!, statConcurrency: Int = 16) {
            self.host = host; self.port = port; self.user = user; self.rootPath = rootPath
            self.remoteDescription = remoteDescription; self.privateKey = privateKey; self.keyPassphrase = keyPassphrase
            self.password = password; self.knownHosts = knownHosts; self.knownHostsDisplay = knownHostsDisplay ?? knownHosts
            self.timeZone = timeZone; self.statConcurrency = max(1, statConcurrency)
        }
    }

    public let remoteDescription: String
    public var capabilities: ProviderCapabilities {
        [.rangedReads, .versions, .write, .rename, .delete, .createFolder, .symlinks, .quota]
    }

    // Internal, not private: the write side (SFTPProvider+Writing.swift) uses them too.
    let configuration: Configuration
    let transport: CurlTransport
    let paths: SFTPPaths
    let errors: SFTPErrors
    let statCache = SFTPStatCache()
    /// The host's known_hosts entries, rewritten for libcurl (see `KnownHosts`).
    let knownHostsFile: KnownHostsFile
    let log = Logger(label: "favfs.sftp")

    /// Uploads go to a hidden temporary name in the target folder first; listings hide it.
    static let temporaryPrefix = ".favfs-upload-"

    public init(configuration: Configuration, transport: CurlTransport) {
        self.configuration = configuration
        self.transport = transport
        self.remoteDescription = configuration.remoteDescription
        self.paths = SFTPPaths(host: configuration.host, port: configuration.port, rootPath: configuration.rootPath)
        var errors = SFTPErrors(remote: configuration.remoteDescription,
                                hostAndPort: "\(configuration.host):\(configuration.port ?? 22)",
                                knownHostsDisplay: configuration.knownHostsDisplay, knownHostsPath: configuration.knownHosts)
        let knownHosts = KnownHostsFile(source: configuration.knownHosts, host: configuration.host, port: configuration.port ?? 22)
        knownHostsFile = knownHosts
        errors.knownHosts = knownHosts
        if let key = configuration.privateKey, Self.isRSA(key) {
            errors.loginHint = "the key \(key) is an RSA key: libcurl's libssh2 (1.10) signs with ssh-rsa (SHA-1), which OpenSSH 8.8 and later refuse — use an ed25519 or ECDSA key (option key)"
        }
        self.errors = errors
    }

    /// Whether a private key file holds an RSA key (PEM header, or its .pub next to it).
    static func isRSA(_ keyPath: String) -> Bool {
        if let pub = try? String(contentsOfFile: keyPath + ".pub", encoding: .utf8) { return pub.hasPrefix("ssh-rsa ") }
        guard let head = FileManager.default.contents(atPath: keyPath)?.prefix(64) else { return false }
        return String(decoding: head, as: UTF8.self).contains("RSA PRIVATE KEY")
    }

    // MARK: requests

    /// A request with the login and host key options; `options` say what it does.
    func request(_ url: String, _ options: [CurlOption]) -> CurlRequest {
        var auth: [CurlOption] = [.sshKnownHosts(knownHostsFile.path)]
        var types = 0
        if let key = configuration.privateKey {
            auth.append(.sshPrivateKeyFile(key))
            types |= 1  // CURLSSH_AUTH_PUBLICKEY
            if let passphrase = configuration.keyPassphrase ?? configuration.password { auth.append(.keyPassword(passphrase)) }
        }
        if configuration.password != nil { types |= 2 }  // CURLSSH_AUTH_PASSWORD
        auth.append(.sshAuthTypes(types))
        return CurlRequest(url: url, credentials: CurlCredentials(user: configuration.user, password: configuration.password ?? ""),
                           options: auth + options)
    }

    /// Runs a request that transfers no content (a stat, quote commands); maps failures.
    @discardableResult
    func perform(_ url: String, _ options: [CurlOption], operation: String, path: String) async throws -> CurlResponse {
        do {
            return try await transport.perform(request(url, options))
        } catch {
            throw errors.transport(error, operation: operation, path: path)
        }
    }

    // MARK: stat

    /// Size and mtime of what `id` names (symlinks followed): open + fstat with CURLOPT_NOBODY,
    /// the mtime from CURLOPT_FILETIME. `quote` commands run first, in the same request.
    func stat(_ id: ItemIdentifier, quote: [String] = [], operation: String = "stat") async throws -> SFTPVersion {
        let response = try await perform(statURL(id), (quote.isEmpty ? [] : [.quote(quote)]) + [.noBody, .fileTime],
                                         operation: operation, path: id.rawValue)
        guard let mtime = response.fileTime else {
            throw ProviderError(.invalidResponse, remote: remoteDescription, path: id.rawValue,
                                detail: "\(operation): the server gave no modification time")
        }
        // libcurl reports no length for an empty file.
        return SFTPVersion(size: response.contentLength ?? 0, mtime: mtime)
    }

    /// The stat URL; the server's "/" itself is asked as "/." (a URL ending in '/' would list it).
    private func statURL(_ id: ItemIdentifier) -> String {
        paths.serverPath(id) == "/" ? paths.origin + "/%2E" : paths.url(id)
    }

    /// The item for a file or folder from its stat; folders carry no version.
    func item(_ id: ItemIdentifier, kind: ItemKind, stat: SFTPVersion, permissions: UInt16? = nil) -> Item {
        Item(identifier: id, kind: kind, size: kind == .file ? stat.size : 0, modified: Double(stat.mtime),
             version: kind == .file ? stat.string : nil, permissions: permissions)
    }

    // MARK: listing

    /// Lists a folder: one long listing, then an exact stat of every file and folder in it
    /// (concurrently; reused from an earlier listing while the entry's line is unchanged, see
    /// `SFTPStatCache`), so sizes and versions equal what `item(for:)` and uploads report.
    /// SFTP listings have no pages.
    public func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        if let page {
            throw ProviderError(.notSupported, remote: remoteDescription, path: folder.rawValue,
                                detail: "SFTP listings have no pages; got page token \(page.token)")
        }
        let listing = try await SFTPListing.fetch(folder, provider: self)
        var skipped: [(name: String, problem: ItemNameProblem)] = []
        var entries: [SFTPListing.Entry] = []
        for entry in listing {
            if let problem = ItemIdentifier.validate(name: entry.name) {
                log.warning("skipping an entry that cannot be a file name", metadata: [
                    "remote": "\(remoteDescription)", "folder": "\(folder.rawValue)", "name": "\(entry.name)", "problem": "\(problem.rawValue)",
                ])
                skipped.append((entry.name, problem))
                continue
            }
            entries.append(entry)
        }
        let items = try await items(for: entries, in: folder, reuseStats: true)
        return EnumerationPage(items: items, nextPage: nil, skipped: skipped)
    }

    /// Items for listed entries: files and folders are stat'ed (at most `statConcurrency` at a
    /// time) unless `reuseStats` finds an earlier stat for an unchanged line; an entry gone since
    /// the listing is left out.
    func items(for entries: [SFTPListing.Entry], in folder: ItemIdentifier, reuseStats: Bool) async throws -> [Item] {
        var results = [Item?](repeating: nil, count: entries.count)
        try await withThrowingTaskGroup(of: (Int, Item?).self) { group in
            var next = 0
            func addNext() {
                guard next < entries.count else { return }
                let index = next
                next += 1
                group.addTask { [self] in (index, try await self.item(from: entries[index], in: folder, reuseStats: reuseStats)) }
            }
            for _ in 0..<configuration.statConcurrency { addNext() }
            while let (index, item) = try await group.next() {
                results[index] = item
                addNext()
            }
        }
        return results.compactMap { $0 }
    }

    /// One listed entry as an item. Symlinks keep the listing's data (a stat would follow them).
    func item(from entry: SFTPListing.Entry, in folder: ItemIdentifier, reuseStats: Bool) async throws -> Item? {
        let id = folder.child(entry.name)
        let line = entry.line
        guard let kind = line.kind else { return nil }
        if kind == .symlink {
            return Item(identifier: id, kind: .symlink, size: line.size,
                        modified: SFTPLongName.date(line.dateText, timeZone: configuration.timeZone),
                        permissions: line.permissions, symlinkTarget: entry.symlinkTarget)
        }
        let path = paths.serverPath(id)
        if reuseStats, let known = statCache.reusable(path, size: line.size, dateText: line.dateText) {
            return item(id, kind: kind, stat: known, permissions: line.permissions)
        }
        do {
            let startedAt = Date().timeIntervalSince1970
            let stat = try await stat(id)
            statCache.store(path, size: line.size, dateText: line.dateText, stat: stat, startedAt: startedAt)
            return item(id, kind: kind, stat: stat, permissions: line.permissions)
        } catch let error as ProviderError where error.kind == .notFound {
            return nil  // deleted since the listing
        } catch let error as ProviderError where error.kind == .denied {
            // Listed but not openable (no read permission): what the listing says, without a
            // version (so reads are not pinned and writes are unconditional).
            log.debug("cannot stat \(id.rawValue): \(error.detail)")
            return Item(identifier: id, kind: kind, size: kind == .file ? line.size : 0,
                        modified: SFTPLongName.date(line.dateText, timeZone: configuration.timeZone), permissions: line.permissions)
        }
    }

    // MARK: item

    /// The root: a stat. Anything else: its entry in the parent's long listing (kind, symlink
    /// target, permissions — a stat follows symlinks and cannot tell them), then a stat of it.
    public func item(for identifier: ItemIdentifier) async throws -> Item {
        guard let parent = identifier.parent else {
            return item(identifier, kind: .folder, stat: try await stat(identifier))
        }
        let listing = try await SFTPListing.fetch(parent, provider: self)
        guard let entry = listing.first(where: { $0.name.utf8.elementsEqual(identifier.name.utf8) }),
              let item = try await item(from: entry, in: parent, reuseStats: false) else {
            throw ProviderError(.notFound, remote: remoteDescription, path: identifier.rawValue,
                                detail: "no such file or folder in \(parent.rawValue)")
        }
        return item
    }

    // MARK: reading

    /// A ranged download into the sink at the same offsets. Pinned to `item.version`: the same
    /// request stats the file right before opening it (CURLOPT_FILETIME), and a different mtime,
    /// or a byte count that shows a different size, is `.versionChanged`. The window left is a
    /// change during the transfer itself within the same second as the pinned mtime.
    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let path = item.identifier.rawValue
        if range.isEmpty { return range }
        let pinned = item.version.flatMap(SFTPVersion.init)
        let request = request(paths.url(item.identifier), [.range("\(range.lowerBound)-\(range.upperBound - 1)"), .fileTime])
        let response: CurlResponse
        do {
            response = try await transport.download(request, into: sink.fd, at: range.lowerBound)
        } catch let error as TransportError where error.code == SFTPErrors.badDownloadResume {
            // The start is past the end of the file.
            if let pinned, range.lowerBound < pinned.size {
                throw changed(path, pinned, detail: "the file is now shorter than byte \(range.lowerBound)")
            }
            return range.lowerBound..<range.lowerBound
        } catch {
            throw errors.transport(error, operation: "read", path: path)
        }
        if let pinned {
            if let mtime = response.fileTime, mtime != pinned.mtime {
                throw changed(path, pinned, detail: "its modification time is now \(mtime)")
            }
            let expected = max(0, min(range.upperBound, pinned.size) - range.lowerBound)
            if response.bytesWritten != expected {
                throw changed(path, pinned, detail: "got \(response.bytesWritten) bytes at \(range.lowerBound), expected \(expected): its size changed")
            }
        }
        return range.lowerBound..<(range.lowerBound + response.bytesWritten)
    }

    private func changed(_ path: String, _ pinned: SFTPVersion, detail: String) -> ProviderError {
        statCache.forget(paths.serverPath(ItemIdentifier(path)))
        return ProviderError(.versionChanged, remote: remoteDescription, path: path,
                      detail: "read refused: the file changed on the server (\(detail); the version read was \(pinned.string))")
    }

    // MARK: quota

    /// Space of the file system holding the root (OpenSSH's statvfs@openssh.com extension);
    /// nil when the server does not have it.
    public func quota() async throws -> Quota? {
        let response: CurlResponse
        do {
            response = try await perform(statURL(.rootContainer), [.quote(["statvfs \(paths.quoted(.rootContainer))"]), .noBody],
                                         operation: "statvfs", path: "/")
        } catch let error as ProviderError where error.status == SFTPErrors.quoteError {
            return nil
        }
        return SFTPStatVFS.quota(fromHeaders: response.headers)
    }
}
