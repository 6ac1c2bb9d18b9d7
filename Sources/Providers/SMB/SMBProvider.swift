import CSMBClient
import FavFSCore
import Foundation

/// An SMB share (Samba, Windows, a NAS) through libsmbclient: `smb://[user@]host[:port]/share/path`.
/// Versions are size and modification time (100 ns, as SMB keeps it), checked with a stat before and after each read. Calls block, so they run on threads of
/// their own, each with its own connection (`SMBConnections`).
public final class SMBProvider: Provider {
    public let remoteDescription: String
    let paths: SMBPaths
    let errors: SMBErrors
    let connections: SMBConnections
    /// Hidden names of uploads in flight and files moved aside while being replaced.
    static let temporaryPrefix = ".favfs-upload-"

    public var capabilities: ProviderCapabilities { [.rangedReads, .versions, .quota, .write, .rename, .delete, .createFolder, .serverSideCopy] }

    init(paths: SMBPaths, settings: SMBSettings, remoteDescription: String) {
        self.paths = paths
        self.remoteDescription = remoteDescription
        errors = SMBErrors(remote: remoteDescription)
        connections = SMBConnections(settings: settings, remote: remoteDescription)
    }

    /// Size and modification time. Not the file id: a server may give none (0) in listings and
    /// one to a stat, and every read would then look like a change.
    static func version(_ st: stat) -> String {
        "\(st.st_size)-\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }

    func item(_ id: ItemIdentifier, _ st: stat) -> Item {
        let isFolder = st.st_mode & S_IFMT == S_IFDIR
        // No permissions: SMB has none to give (Samba makes mode bits up from DOS attributes,
        // the archive bit becoming "executable").
        return Item(identifier: id, kind: isFolder ? .folder : .file, size: isFolder ? 0 : Int64(st.st_size),
                    modifiedTime: Timestamp(seconds: Int64(st.st_mtim.tv_sec), nanoseconds: Int32(st.st_mtim.tv_nsec)),
                    version: isFolder ? nil : Self.version(st))
    }

    /// One stat, on a connection's thread.
    static func stat(_ c: SMBContext, _ url: String) -> (stat?, Int32) {
        var st = Glibc.stat()
        return favfs_smb_stat(c.handle, url, &st) == 0 ? (st, 0) : (nil, errno)
    }

    public func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        let url = paths.url(folder), errors = errors
        let entries: [(String, stat)] = try await connections.run { c in
            guard let dir = favfs_smb_opendir(c.handle, url) else { throw errors.failure("cannot list the folder", folder.rawValue, errno) }
            defer { _ = favfs_smb_closedir(c.handle, dir) }
            var out: [(String, stat)] = []
            var name = [CChar](repeating: 0, count: 1024)
            var st = Glibc.stat()
            while favfs_smb_readdir(c.handle, dir, &st, &name, name.count) == 1 {
                // SMB names are UTF-16 on the wire: libsmbclient's UTF-8 is always valid.
                out.append((String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), st))
            }
            return out
        }
        var items: [Item] = []
        var skipped: [(name: String, problem: ItemNameProblem)] = []
        for (name, st) in entries {
            if name == "." || name == ".." || name.hasPrefix(Self.temporaryPrefix) { continue }
            if let problem = ItemIdentifier.validate(name: name) { skipped.append((name, problem)); continue }
            items.append(item(folder.child(name), st))
        }
        return EnumerationPage(items: items, nextPage: nil, skipped: skipped)
    }

    public func item(for identifier: ItemIdentifier) async throws -> Item {
        let url = paths.url(identifier)
        let (st, err) = try await connections.run { c in Self.stat(c, url) }
        guard let st else { throw errors.failure("cannot stat", identifier.rawValue, err) }
        return item(identifier, st)
    }

    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let id = item.identifier, url = paths.url(id), errors = errors, remote = remoteDescription
        let counter = TransferCounting.current
        return try await connections.run { c in
            guard let file = favfs_smb_open(c.handle, url, O_RDONLY, 0) else { throw errors.failure("cannot open", id.rawValue, errno) }
            defer { _ = favfs_smb_close(c.handle, file) }
            func current() throws -> stat {
                var st = Glibc.stat()
                guard favfs_smb_fstat(c.handle, file, &st) == 0 else { throw errors.failure("cannot stat", id.rawValue, errno) }
                return st
            }
            func checkVersion(_ when: String) throws {
                let st = try current()
                if let v = item.version, v != Self.version(st) {
                    throw ProviderError(.versionChanged, remote: remote, path: id.rawValue, detail: "the file changed \(when) (now \(Self.version(st)), read for \(v))")
                }
            }
            try checkVersion("since it was listed")
            guard favfs_smb_lseek(c.handle, file, off_t(range.lowerBound), SEEK_SET) >= 0 else {
                throw errors.failure("cannot seek", id.rawValue, errno)
            }
            var off = range.lowerBound
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while off < range.upperBound {
                let want = Int(min(Int64(buffer.count), range.upperBound - off))
                let n = buffer.withUnsafeMutableBytes { favfs_smb_read(c.handle, file, $0.baseAddress, want) }
                if n < 0 { throw errors.failure("cannot read", id.rawValue, errno) }
                if n == 0 { break }
                var done = 0
                while done < n {
                    let w = buffer.withUnsafeBytes { pwrite(sink.fd, $0.baseAddress! + done, n - done, off_t(off) + off_t(done)) }
                    if w < 0 {
                        let err = errno
                        throw ProviderError(err == ENOSPC || err == EDQUOT ? .noSpace : .localIO, remote: remote, path: id.rawValue,
                                            detail: "cannot write to the content cache: \(String(cString: strerror(err)))")
                    }
                    done += w
                }
                off += Int64(n)
                counter?.add(Int64(n))
            }
            // Bytes of two versions are never handed out as one.
            try checkVersion("while it was read")
            return range.lowerBound..<max(range.lowerBound, off)
        }
    }

    public func quota() async throws -> Quota? {
        let url = paths.url(.rootContainer)
        let answer: statvfs? = try await connections.run { c in
            var s = statvfs()
            return favfs_smb_statvfs(c.handle, url, &s) == 0 ? s : nil
        }
        guard let s = answer else { return nil }
        // libsmbclient puts the server's bytes per sector in f_bsize and its sectors per
        // allocation unit in f_frsize; the block counts are allocation units.
        let unit = Int64(s.f_bsize) * Int64(max(1, s.f_frsize))
        return Quota(usedBytes: (Int64(s.f_blocks) - Int64(s.f_bfree)) * unit, availableBytes: Int64(s.f_bavail) * unit,
                     totalBytes: Int64(s.f_blocks) * unit, freeBytes: Int64(s.f_bfree) * unit)
    }
}

extension SMBProvider: FolderStampProvider {
    /// The folder's modification time: the server's file system changes it when a child is
    /// added, removed or renamed.
    public func folderStamp(of folder: ItemIdentifier) async throws -> String? {
        let url = paths.url(folder)
        let (st, err) = try await connections.run { c in Self.stat(c, url) }
        guard let st else { throw errors.failure("cannot stat the folder", folder.rawValue, err) }
        return "\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }
}
