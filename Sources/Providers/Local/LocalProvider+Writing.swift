import CLinux
import Foundation
import FavFSCore

/// The local folder's write side, with the same semantics as a versioned remote: uploads are
/// written to a temp file and moved into place, conditional on the version they were based on.
extension LocalProvider: WritableProvider {
    /// The backing folder's own limit: its path plus the item's must fit in PATH_MAX.
    public func storageProblem(_ id: ItemIdentifier, kind: ItemKind) -> ProviderError? {
        let length = path(id).utf8.count
        guard length >= Int(PATH_MAX) else { return nil }
        return ProviderError(.nameTooLong, remote: remoteDescription, path: id.rawValue,
                             detail: "the path in the backing folder would be \(length) bytes; at most \(Int(PATH_MAX) - 1) fit")
    }

    public func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        guard let parent = id.parent else { throw ProviderError(.isAFolder, remote: remoteDescription, path: "/", detail: "cannot upload to the root") }
        let temp = path(parent) + "/.favfs-upload-\(UUID().uuidString.prefix(12))"
        let out = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard out >= 0 else { throw failure(id, "cannot create upload file") }
        var ok = false
        defer { if !ok { unlink(temp) } }
        // The mode the file has (a replacement keeps it) or a shared folder's usual 0644: never
        // the daemon's private umask, which would turn the served file private.
        fchmod(out, Self.uploadMode(replacing: path(id)))
        // What was uploaded is described from the upload file itself, not from the name: another
        // mount replacing the same file may have moved the name aside for a moment (`replace`).
        // A link or rename keeps the inode, size and mtime the version is made of.
        var written = stat()
        do {
            defer { close(out) }
            try copy(from: source, to: out, id: id)
            guard fsync(out) == 0 else { throw failure(id, "cannot sync upload") }
            guard fstat(out, &written) == 0 else { throw failure(id, "cannot stat upload") }
        }
        switch precondition {
        case .mustNotExist:
            // link() fails if the name exists: an atomic create-if-absent.
            guard link(temp, path(id)) == 0 else {
                throw errno == EEXIST ? ProviderError(.exists, remote: remoteDescription, path: id.rawValue, detail: "already exists")
                                      : failure(id, "cannot create")
            }
            unlink(temp)
        case .mustMatch(let version):
            try replace(id, with: temp, base: version)
        case .none:
            guard Glibc.rename(temp, path(id)) == 0 else { throw failure(id, "cannot replace") }
        }
        ok = true
        return item(id, written)
    }

    /// Replaces version `base` of `id` with `temp` so that of two writers (two mounts of one
    /// folder) only one can succeed: `rename` the current file aside (one of them gets it; for
    /// the other it is gone), compare what was moved, then `link` the new file in, which fails
    /// if the name was taken meanwhile. Another edit moved aside by mistake is linked back.
    private func replace(_ id: ItemIdentifier, with temp: String, base: String) throws {
        let target = path(id)
        let aside = (target as NSString).deletingLastPathComponent + "/.favfs-upload-aside-\(UUID().uuidString.prefix(12))"
        guard Glibc.rename(target, aside) == 0 else {
            if errno == ENOENT {
                throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue, detail: "deleted, or being replaced by someone else, since it was read")
            }
            throw failure(id, "cannot move the current file aside")
        }
        var st = stat()
        guard lstat(aside, &st) == 0, Self.version(st) == base else {
            // Another client's edit — or its folder, made at the name after the file was
            // deleted: put it back as it was, never replacing what took the name meanwhile
            // (then it stays visible beside it).
            if favfs_rename_noreplace(aside, target) != 0 {
                _ = favfs_rename_noreplace(aside, target + " (displaced \(UUID().uuidString.prefix(6).lowercased()))")
            }
            throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue, detail: "changed since it was read")
        }
        guard link(temp, target) == 0 else {
            let code = errno
            unlink(aside)  // the version we meant to replace
            if code == EEXIST {
                throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue, detail: "a file was created under this name meanwhile")
            }
            throw failure(id, "cannot replace")
        }
        unlink(temp)
        unlink(aside)
    }

    private func copy(from source: ContentSource, to out: Int32, id: ItemIdentifier) throws {
        var buf = [UInt8](repeating: 0, count: 1 << 20)
        var off: Int64 = 0
        let counter = TransferCounting.current  // progress for favfs status
        while off < source.length {
            let n = buf.withUnsafeMutableBytes { pread(source.fd, $0.baseAddress, min($0.count, Int(source.length - off)), off_t(off)) }
            if n < 0 { throw failure(id, "cannot read the cached content") }
            if n == 0 { break }
            var done = 0
            while done < n {
                let w = buf.withUnsafeBytes { Glibc.write(out, $0.baseAddress! + done, n - done) }
                if w < 0 { throw failure(id, "cannot write") }
                done += w
            }
            off += Int64(n)
            counter?.add(Int64(n))
        }
    }

    public func createFolder(_ id: ItemIdentifier) async throws -> Item {
        guard mkdir(path(id), 0o755) == 0 else {
            throw errno == EEXIST ? ProviderError(.exists, remote: remoteDescription, path: id.rawValue, detail: "already exists")
                                  : failure(id, "cannot create folder")
        }
        // 0755 whatever the daemon's private umask.
        chmod(path(id), 0o755)
        return try await item(for: id)
    }

    /// The permission bits an uploaded file gets: those of the file it replaces, else 0644.
    static func uploadMode(replacing target: String) -> mode_t {
        var st = stat()
        guard lstat(target, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return 0o644 }
        return st.st_mode & 0o7777
    }

    public func delete(_ item: Item) async throws {
        let p = path(item.identifier)
        let rc = item.kind == .folder ? rmdir(p) : unlink(p)
        guard rc == 0 else {
            throw errno == ENOTEMPTY ? ProviderError(.notEmpty, remote: remoteDescription, path: item.identifier.rawValue, detail: "folder not empty")
                                     : failure(item.identifier, "cannot delete")
        }
    }

    public func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        if !replacing {
            var st = stat()
            if lstat(path(destination), &st) == 0 {
                throw ProviderError(.exists, remote: remoteDescription, path: destination.rawValue, detail: "already exists")
            }
        }
        guard Glibc.rename(path(item.identifier), path(destination)) == 0 else {
            switch errno {
            case ENOTEMPTY, EEXIST: throw ProviderError(.notEmpty, remote: remoteDescription, path: destination.rawValue, detail: "folder not empty")
            case EXDEV: throw ProviderError(.crossDevice, remote: remoteDescription, path: destination.rawValue, detail: "cannot move across filesystems")
            default: throw failure(item.identifier, "cannot move to \(destination)")
            }
        }
        return try await self.item(for: destination)
    }

    public func setModified(_ id: ItemIdentifier, to time: Timestamp) async throws -> Item {
        let ts = timespec(tv_sec: time_t(time.seconds), tv_nsec: Int(time.nanoseconds))
        let times = [ts, ts]
        guard utimensat(AT_FDCWD, path(id), times, AT_SYMLINK_NOFOLLOW) == 0 else { throw failure(id, "cannot set times") }
        return try await item(for: id)
    }

    public func createSymlink(_ id: ItemIdentifier, target: String) async throws -> Item {
        guard symlink(target, path(id)) == 0 else {
            throw errno == EEXIST ? ProviderError(.exists, remote: remoteDescription, path: id.rawValue, detail: "already exists")
                                  : failure(id, "cannot create symlink")
        }
        return try await item(for: id)
    }
}
