import CSMBClient
import FavFSCore
import Foundation

/// The write side. An upload goes to a hidden temporary name in the target folder and is
/// renamed into place only when complete, so a failed upload never leaves a truncated file.
/// Replacing a version, or creating a name that must be free, is arbitrated by an `SMBClaim`
/// on the name: under it the version (or absence) is checked and the file renamed into place,
/// so of two mounts writing one file at once, one replaces it and the other's edit becomes
/// the conflict copy.
extension SMBProvider: WritableProvider {
    /// Characters SMB does not allow in names (`\ / : * ? " < > |` and control characters):
    /// the server refuses them, so a file named so could never be uploaded.
    static let forbidden: Set<Unicode.Scalar> = Set("\\:*?\"<>|".unicodeScalars).union((1..<32).compactMap(Unicode.Scalar.init))

    public func storageProblem(_ id: ItemIdentifier, kind: ItemKind) -> ProviderError? {
        guard let bad = id.name.unicodeScalars.first(where: { Self.forbidden.contains($0) }) else { return nil }
        let shown = bad.value < 32 ? String(format: "U+%04X", bad.value) : "'\(bad)'"
        return ProviderError(.invalidName, remote: remoteDescription, path: id.rawValue,
                             detail: "SMB does not allow \(shown) in names (nor \\ : * ? \" < > | or control characters)")
    }

    // MARK: upload

    public func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        guard let parent = id.parent, !id.isRoot else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: id.rawValue, detail: "cannot upload over the root folder")
        }
        if let problem = storageProblem(id, kind: .file) { throw problem }
        let target = paths.url(id), errors = errors, remote = remoteDescription
        let temp = paths.url(parent.child(Self.temporaryPrefix + UUID().uuidString.prefix(8).lowercased()))
        let counter = TransferCounting.current, paths = paths
        let st: stat = try await connections.run { c in
            // Before the transfer: no bytes sent for an upload that is refused anyway.
            try Self.check(precondition, c, target, id: id, remote: remote, errors: errors)
            try Self.write(source, to: temp, c, id: id, parent: parent, remote: remote, errors: errors, counter: counter)
            var claim: SMBClaim?
            if case .none = precondition {} else {
                do { claim = try SMBClaim.take(c, folder: parent, name: id.name, paths: paths, id: id, remote: remote, errors: errors) }
                catch { _ = favfs_smb_unlink(c.handle, temp); throw error }
            }
            defer { claim?.release(c) }
            // Under the claim, the answer holds until the rename (for every favfs mount).
            try Self.check(precondition, c, target, id: id, remote: remote, errors: errors, removing: temp)
            // The version being replaced is moved aside first, so the rename into place finds
            // the name free: libsmbclient's replacing rename removes the target and renames
            // again, and when another client has the old file open (a stat opens it) the
            // removal waits for that close and the second rename fails — the name then lost
            // both the old file and ours.
            var aside: String?
            if case .mustMatch = precondition {
                let name = paths.url(parent.child(Self.temporaryPrefix + "aside-" + UUID().uuidString.prefix(8).lowercased()))
                guard favfs_smb_rename(c.handle, target, name) == 0 else {
                    let failure = errors.failure("upload (move the old version aside)", id.rawValue, errno)
                    _ = favfs_smb_unlink(c.handle, temp)
                    throw failure
                }
                aside = name
            }
            guard favfs_smb_rename(c.handle, temp, target) == 0 else {
                let failure = errors.failure("upload (rename into place)", id.rawValue, errno)
                _ = favfs_smb_unlink(c.handle, temp)
                if let aside { _ = favfs_smb_rename(c.handle, aside, target) }
                throw failure
            }
            if let aside { _ = favfs_smb_unlink(c.handle, aside) }
            let (now, err) = Self.stat(c, target)
            guard let now else { throw errors.failure("upload (stat after rename)", id.rawValue, err) }
            return now
        }
        return item(id, st)
    }

    /// Throws unless `target` is as `precondition` wants it: absent, or at version `base`.
    private static func check(_ precondition: UploadPrecondition, _ c: SMBContext, _ target: String, id: ItemIdentifier,
                              remote: String, errors: SMBErrors, removing temp: String? = nil) throws {
        let (st, err) = stat(c, target)
        var refusal: ProviderError?
        switch precondition {
        case .none:
            return
        case .mustNotExist:
            if st != nil {
                refusal = ProviderError(.exists, remote: remote, path: id.rawValue,
                                        detail: "upload refused: a file of this name exists on the server (names are compared without case on most SMB servers)")
            } else if err != ENOENT {
                refusal = errors.failure("upload (check that the name is free)", id.rawValue, err)
            }
        case .mustMatch(let base):
            if let st, version(st) != base {
                refusal = ProviderError(.versionChanged, remote: remote, path: id.rawValue,
                                        detail: "upload refused: the file changed on the server (now \(version(st)), base version \(base))")
            } else if st == nil {
                refusal = err == ENOENT
                    ? ProviderError(.versionChanged, remote: remote, path: id.rawValue, detail: "upload refused: the file was deleted on the server")
                    : errors.failure("upload (check the version)", id.rawValue, err)
            }
        }
        if let refusal {
            if let temp { _ = favfs_smb_unlink(c.handle, temp) }
            throw refusal
        }
    }

    /// Writes all of `source` to a new file at `temp` (which must not exist).
    private static func write(_ source: ContentSource, to temp: String, _ c: SMBContext, id: ItemIdentifier, parent: ItemIdentifier,
                              remote: String, errors: SMBErrors, counter: TransferCounter?) throws {
        guard let file = favfs_smb_open(c.handle, temp, O_CREAT | O_EXCL | O_WRONLY, 0o644) else {
            let err = errno
            if err == ENOENT {
                throw ProviderError(.notFound, remote: remote, path: id.rawValue, detail: "upload failed: the folder \(parent.rawValue) does not exist")
            }
            throw errors.failure("upload (create the temporary file)", id.rawValue, err)
        }
        var failure: ProviderError?
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var off: Int64 = 0
        while off < source.length && failure == nil {
            let want = Int(min(Int64(buffer.count), source.length - off))
            let n = buffer.withUnsafeMutableBytes { pread(source.fd, $0.baseAddress, want, off_t(off)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                failure = ProviderError(.localIO, remote: remote, path: id.rawValue,
                                        detail: n == 0 ? "upload: the cached file ended at \(off) of \(source.length) bytes"
                                                       : "upload: cannot read the cached file: \(String(cString: strerror(errno)))")
                break
            }
            var done = 0
            while done < n {
                let w = buffer.withUnsafeBytes { favfs_smb_write(c.handle, file, $0.baseAddress! + done, n - done) }
                if w <= 0 { failure = errors.failure("upload (write)", id.rawValue, w < 0 ? errno : EIO); break }
                done += w
            }
            off += Int64(done)
            counter?.add(Int64(done))
        }
        // The close reports a failed write the server delayed (a full disk).
        if favfs_smb_close(c.handle, file) != 0 && failure == nil { failure = errors.failure("upload (close)", id.rawValue, errno) }
        if let failure {
            _ = favfs_smb_unlink(c.handle, temp)
            throw failure
        }
    }

    // MARK: folders, deletion, moves, times

    public func createFolder(_ id: ItemIdentifier) async throws -> Item {
        if let problem = storageProblem(id, kind: .folder) { throw problem }
        let url = paths.url(id), errors = errors
        let st: stat = try await connections.run { c in
            guard favfs_smb_mkdir(c.handle, url, 0o755) == 0 else { throw errors.failure("cannot create the folder", id.rawValue, errno) }
            let (st, err) = Self.stat(c, url)
            guard let st else { throw errors.failure("cannot stat the new folder", id.rawValue, err) }
            return st
        }
        return item(id, st)
    }

    public func delete(_ item: Item) async throws {
        let id = item.identifier, url = paths.url(id), errors = errors, isFolder = item.isFolder
        try await connections.run { c in
            // Never unlink a folder: libsmbclient answers success and nothing is removed.
            let rc = isFolder ? favfs_smb_rmdir(c.handle, url) : favfs_smb_unlink(c.handle, url)
            guard rc == 0 else { throw errors.failure(isFolder ? "cannot remove the folder" : "cannot delete", id.rawValue, errno) }
        }
    }

    public func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        if let problem = storageProblem(destination, kind: item.kind) { throw problem }
        let from = paths.url(item.identifier), to = paths.url(destination), errors = errors, remote = remoteDescription
        let caseOnly = item.identifier.rawValue.lowercased() == destination.rawValue.lowercased()
        let st: stat = try await connections.run { c in
            // A rename that only changes case finds its own source under the new name.
            let existing = caseOnly ? nil : Self.stat(c, to).0
            if !replacing, existing != nil {
                throw ProviderError(.exists, remote: remote, path: destination.rawValue, detail: "cannot move \(item.identifier.rawValue) here: the name exists")
            }
            // libsmbclient replaces a file (it removes it and renames again) but not a folder:
            // an empty folder being replaced (the core checked it is empty) goes first.
            if replacing, item.isFolder, let existing, existing.st_mode & S_IFMT == S_IFDIR, favfs_smb_rmdir(c.handle, to) != 0 {
                throw errors.failure("cannot replace the folder \(destination.rawValue)", destination.rawValue, errno)
            }
            guard favfs_smb_rename(c.handle, from, to) == 0 else {
                throw errors.failure("cannot move to \(destination.rawValue)", item.identifier.rawValue, errno)
            }
            let (st, err) = Self.stat(c, to)
            guard let st else { throw errors.failure("cannot stat after the move", destination.rawValue, err) }
            return st
        }
        return self.item(destination, st)
    }

    public func setModified(_ id: ItemIdentifier, to time: Timestamp) async throws -> Item {
        let url = paths.url(id), errors = errors
        // SMB keeps 100 ns; libsmbclient takes microseconds.
        let seconds = Int(time.seconds), micros = Int(time.nanoseconds / 1000)
        let st: stat = try await connections.run { c in
            let (before, err) = Self.stat(c, url)
            guard let before else { throw errors.failure("cannot stat", id.rawValue, err) }
            guard favfs_smb_utimes(c.handle, url, Int(before.st_atim.tv_sec), Int(before.st_atim.tv_nsec / 1000), seconds, micros) == 0 else {
                throw errors.failure("cannot set the modification time", id.rawValue, errno)
            }
            let (st, err2) = Self.stat(c, url)
            guard let st else { throw errors.failure("cannot stat", id.rawValue, err2) }
            return st
        }
        return item(id, st)
    }
}
