import Foundation
import FavFSCore

/// A local folder as a remote (`file:///path`): the reference provider. Versions are size and
/// mtime in nanoseconds, so a change between stat and read is detected like an ETag change.
public final class LocalProvider: Provider {
    public let root: String
    public let remoteDescription: String
    /// inotify on the folders in use (`FolderWatchingProvider`).
    let watcher = LocalFolderWatcher()
    public var capabilities: ProviderCapabilities { [.rangedReads, .versions, .quota, .symlinks, .write, .rename, .delete, .createFolder, .serverSideCopy] }

    public init(root: String) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        remoteDescription = "file://" + self.root
    }

    func path(_ id: ItemIdentifier) -> String { id.isRoot ? root : root + id.rawValue }

    func failure(_ id: ItemIdentifier, _ what: String, _ err: Int32 = errno) -> ProviderError {
        let kind: ProviderError.Kind
        switch err {
        case ENOENT: kind = .notFound
        case EACCES, EPERM: kind = .denied
        case ENOTDIR: kind = .notAFolder
        case EISDIR: kind = .isAFolder
        case ENOSPC, EDQUOT: kind = .noSpace
        default: kind = .localIO
        }
        return ProviderError(kind, remote: remoteDescription, path: id.rawValue, detail: "\(what): \(String(cString: strerror(err)))")
    }

    static func version(_ st: stat) -> String {
        "\(st.st_size)-\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)-\(st.st_ino)"
    }

    func item(_ id: ItemIdentifier, _ st: stat) -> Item {
        let fmt = st.st_mode & S_IFMT
        let kind: ItemKind = fmt == S_IFDIR ? .folder : fmt == S_IFLNK ? .symlink : .file
        var target: String? = nil
        if kind == .symlink {
            var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(path(id), &buf, buf.count - 1)
            if n >= 0 { target = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        }
        return Item(identifier: id, kind: kind, size: kind == .file ? Int64(st.st_size) : 0,
                    modifiedTime: Timestamp(seconds: Int64(st.st_mtim.tv_sec), nanoseconds: Int32(st.st_mtim.tv_nsec)),
                    version: kind == .file ? Self.version(st) : nil,
                    permissions: UInt16(st.st_mode & 0o7777), symlinkTarget: target)
    }

    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

    public func enumerateItems(in folder: ItemIdentifier, page: Page?) async throws -> EnumerationPage {
        guard let dir = opendir(path(folder)) else { throw failure(folder, "cannot list folder") }
        defer { closedir(dir) }
        var items: [Item] = []
        var skipped: [(name: String, problem: ItemNameProblem)] = []
        while let ent = readdir(dir) {
            // Read in place: a dirent is only as long as its name (`d_reclen`), so copying the
            // 256-byte `d_name` field read past the end of readdir's buffer (AddressSanitizer).
            let name = String(cString: UnsafeRawPointer(ent).advanced(by: Self.nameOffset).assumingMemoryBound(to: CChar.self))
            if name == "." || name == ".." || name.hasPrefix(".favfs-upload-") { continue } // ours, in flight
            if let problem = ItemIdentifier.validate(name: name) { skipped.append((name, problem)); continue }
            let id = folder.child(name)
            var st = stat()
            guard lstat(path(id), &st) == 0 else { continue } // vanished meanwhile
            items.append(item(id, st))
        }
        return EnumerationPage(items: items, nextPage: nil, skipped: skipped)
    }

    public func item(for identifier: ItemIdentifier) async throws -> Item {
        var st = stat()
        guard lstat(path(identifier), &st) == 0 else { throw failure(identifier, "cannot stat") }
        return item(identifier, st)
    }

    public func readContents(of item: Item, range: Range<Int64>, into sink: ContentSink) async throws -> Range<Int64> {
        let id = item.identifier
        let fd = open(path(id), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(id, "cannot open") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw failure(id, "cannot stat") }
        if let v = item.version, v != Self.version(st) {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue, detail: "the file changed since it was listed")
        }
        let end = min(range.upperBound, Int64(st.st_size))
        var off = range.lowerBound
        let counter = TransferCounting.current  // progress for favfs status (no transport here to count)
        // In the kernel where it can (copy_file_range), so no buffer is filled and copied
        // through this process for each file.
        while off < end {
            let n = FileCopy.chunk(fd, sink.fd, at: off, max: Int(min(end - off, FileCopy.step)))
            if n < 0 { if errno == EINTR { continue }; throw failure(id, "cannot copy into the cache") }
            if n == 0 { break }
            off += Int64(n)
            counter?.add(Int64(n))
        }
        return range.lowerBound..<max(range.lowerBound, off)
    }

    public func quota() async throws -> Quota? {
        var s = statvfs()
        guard statvfs(root, &s) == 0 else { return nil }
        let bs = Int64(s.f_frsize)
        return Quota(usedBytes: (Int64(s.f_blocks) - Int64(s.f_bfree)) * bs, availableBytes: Int64(s.f_bavail) * bs,
                     totalBytes: Int64(s.f_blocks) * bs, freeBytes: Int64(s.f_bfree) * bs)
    }
}
