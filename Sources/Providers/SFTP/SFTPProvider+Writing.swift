import Curl
import FavFSCore
import Foundation

/// The write side, as libcurl SFTP quote commands plus uploads.
///
/// An upload goes to a hidden temporary name in the target folder and is renamed into place
/// only when complete, so a failed upload never leaves a truncated file. OpenSSH's SFTP v3
/// `rename` never replaces an existing target (sftp-server links, then unlinks), and libcurl
/// 7.88 with libssh2 1.10 has no posix-rename: replacing is two renames, so for one round trip
/// the name does not exist. Replacing a known version moves the current file aside first (see
/// `replace`), which only one of two writers can do: the other's edit is never lost silently.
extension SFTPProvider: WritableProvider {
    // MARK: upload

    /// Uploads to a temporary name, then (one request) checks nothing further and swaps it in,
    /// with the new file's stat taken in the same request.
    ///
    /// - `.mustNotExist`: a plain `rename`, which OpenSSH refuses when the target exists: atomic.
    /// - `.mustMatch(v)`: stat before the upload (no wasted transfer), then `replace`.
    /// - `.none`: `rm` (allowed to fail) then `rename`.
    public func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        guard let parent = id.parent else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: id.rawValue, detail: "cannot upload over the root folder")
        }
        try await check(precondition, id)
        statCache.forget(paths.serverPath(id))
        let temp = parent.child(Self.temporaryPrefix + UUID().uuidString.prefix(8).lowercased())
        do {
            _ = try await transport.upload(request(paths.url(temp), [.newFilePermissions(0o644)]), from: source.fd, length: source.length)
        } catch {
            let failure = errors.transport(error, operation: "upload", path: id.rawValue)
            await removeQuietly(temp)
            throw failure.kind == .notFound
                ? ProviderError(.notFound, remote: remoteDescription, path: id.rawValue, status: failure.status,
                                detail: "upload failed: the folder \(parent.rawValue) does not exist (\(failure.detail))")
                : failure
        }
        var swap: [String]
        switch precondition {
        case .mustNotExist:
            swap = []
        case .mustMatch(let base):
            return try await replace(id, with: temp, base: base, length: source.length)
        case .none:
            swap = ["*rm \(paths.quoted(id))"]
        }
        swap.append("rename \(paths.quoted(temp)) \(paths.quoted(id))")
        var result: SFTPVersion
        do {
            result = try await stat(id, quote: swap, operation: "upload (rename into place)")
        } catch let error as ProviderError {
            await removeQuietly(temp)
            if precondition == .mustNotExist, error.status == SFTPErrors.quoteError, (try? await stat(id)) != nil {
                throw ProviderError(.exists, remote: remoteDescription, path: id.rawValue, status: error.status,
                                    detail: "upload refused: the file was created on the server meanwhile (\(error.detail))")
            }
            throw error
        }
        return item(id, kind: .file, stat: result)
    }

    /// Replaces version `base` of `id` with the uploaded `temp`, atomically enough that two
    /// writers cannot both succeed: `rename id aside` (one of them wins it; for the other the name
    /// is gone), a stat of what was moved aside, then `rename temp id` and `rm aside`. When what
    /// was moved aside is not `base` (someone else's edit, saved between our check and the move),
    /// it is put back and the upload refused with `.versionChanged`, so ours becomes a conflict
    /// copy. What is left: for one round trip the name does not exist (a reader then gets ENOENT).
    private func replace(_ id: ItemIdentifier, with temp: ItemIdentifier, base: String, length: Int64) async throws -> Item {
        let parent = id.parent ?? .rootContainer
        let aside = parent.child(Self.temporaryPrefix + "aside-" + UUID().uuidString.prefix(8).lowercased())
        let displaced: SFTPVersion
        do {
            displaced = try await stat(aside, quote: ["rename \(paths.quoted(id)) \(paths.quoted(aside))"], operation: "upload (move the current file aside)")
        } catch let error as ProviderError where error.status == SFTPErrors.quoteError || error.kind == .notFound {
            await removeQuietly(temp)
            throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue, status: error.status,
                                detail: "upload refused: the file is gone or being replaced by someone else (\(error.detail))")
        } catch {
            await removeQuietly(temp)
            throw error
        }
        guard displaced.string == base else {
            await putBack(aside, as: id)
            await removeQuietly(temp)
            throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue,
                                detail: "upload refused: the file changed on the server (now \(displaced.string), base version \(base))")
        }
        var result: SFTPVersion
        do {
            result = try await stat(id, quote: ["rename \(paths.quoted(temp)) \(paths.quoted(id))", "*rm \(paths.quoted(aside))"],
                                    operation: "upload (rename into place)")
        } catch let error as ProviderError where (error.kind == .notFound && error.status != SFTPErrors.quoteError)
                                                    || error.kind == .invalidResponse {
            // The renames ran; the stat after them did not find the file (or found it without a
            // modification time, seen under load): another writer has it aside this instant, to
            // compare, and puts it back. Ask again for a moment.
            result = try await settledStat(id, length: length, after: error)
        } catch let error as ProviderError {
            // The name was taken while it was free (a new file by someone else): theirs stays,
            // ours becomes a conflict copy; the base we moved aside was being replaced anyway.
            await removeQuietly(temp)
            await removeQuietly(aside)
            throw error.status == SFTPErrors.quoteError
                ? ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue, status: error.status,
                                detail: "upload refused: a file was created under this name meanwhile (\(error.detail))")
                : error
        }
        if result.string == base {
            // Same size, written within the same second as the base: nudge the mtime so the new
            // content gets a version of its own (a reader of the old one must notice).
            // Best effort: the upload is in place; another writer holding the name aside this
            // instant must not turn it into a failed upload (an fsync EIO in the two-writer test).
            do {
                result = try await stat(id, quote: [mtimeCommand(id, seconds: result.mtime + 1)], operation: "upload (distinct mtime)")
            } catch {
                log.notice("the uploaded file's mtime could not be made distinct from its base version's", metadata: [
                    "remote": "\(remoteDescription)", "path": "\(id.rawValue)", "error": "\(error)"])
            }
        }
        return item(id, kind: .file, stat: result)
    }

    /// The stat of a file just put in place that another writer is briefly holding aside: asked
    /// again for up to a second. Not back, or not ours (another size): `.versionChanged`.
    private func settledStat(_ id: ItemIdentifier, length: Int64, after error: ProviderError) async throws -> SFTPVersion {
        for _ in 0..<10 {
            try? await Task.sleep(nanoseconds: 100_000_000)
            if let now = try? await stat(id, operation: "upload (stat after rename)") {
                if now.size == length { return now }
                break
            }
        }
        throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue, status: error.status,
                            detail: "the upload was renamed into place, then replaced by someone else (\(error.detail))")
    }

    /// Puts someone else's edit, moved aside by mistake, back under its name; if the name was
    /// taken meanwhile, keeps it beside, visible, rather than hidden.
    private func putBack(_ aside: ItemIdentifier, as id: ItemIdentifier) async {
        if (try? await stat(id, quote: ["rename \(paths.quoted(aside)) \(paths.quoted(id))"], operation: "upload (put the other edit back)")) != nil {
            return
        }
        let parent = id.parent ?? .rootContainer
        let visible = parent.child("\(id.name) (displaced \(UUID().uuidString.prefix(6).lowercased()))")
        let kept = (try? await stat(visible, quote: ["rename \(paths.quoted(aside)) \(paths.quoted(visible))"], operation: "upload (keep the other edit)")) != nil
        log.warning("another client's edit could not be put back under its name", metadata: [
            "remote": "\(remoteDescription)", "path": "\(id.rawValue)", "kept as": "\(kept ? visible.rawValue : aside.rawValue)",
        ])
    }

    /// Throws `.exists` / `.versionChanged` when the target does not meet `precondition` now.
    private func check(_ precondition: UploadPrecondition, _ id: ItemIdentifier, cleanup: ItemIdentifier? = nil) async throws {
        let current: SFTPVersion?
        switch precondition {
        case .none: return
        case .mustNotExist, .mustMatch:
            do {
                current = try await stat(id, operation: "upload (precondition)")
            } catch let error as ProviderError where error.kind == .notFound {
                current = nil
            } catch let error as ProviderError where error.kind == .invalidResponse {
                // A stat that races another writer's swap can come back without a time (the
                // name is gone for that instant): ask once more, then take it as not there.
                try? await Task.sleep(nanoseconds: 100_000_000)
                current = try? await stat(id, operation: "upload (precondition)")
                if current == nil, case .mustNotExist = precondition { throw error }
            }
        }
        var refusal: ProviderError?
        switch precondition {
        case .mustNotExist where current != nil:
            refusal = ProviderError(.exists, remote: remoteDescription, path: id.rawValue, detail: "upload refused: the file exists on the server")
        case .mustMatch(let base) where current?.string != base:
            refusal = ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue,
                                    detail: "upload refused: the file changed on the server (now \(current?.string ?? "gone"), base version \(base))")
        default:
            break
        }
        if let refusal {
            if let cleanup { await removeQuietly(cleanup) }
            throw refusal
        }
    }

    /// Best effort: a leftover temporary file is hidden from listings anyway.
    private func removeQuietly(_ id: ItemIdentifier) async {
        _ = try? await perform(statURL(parentOf: id), [.quote(["*rm \(paths.quoted(id))"]), .noBody], operation: "clean up", path: id.rawValue)
    }

    /// Quote commands need a URL to run against; a stat of the parent folder is the cheapest.
    private func statURL(parentOf id: ItemIdentifier) -> String {
        let parent = id.parent ?? .rootContainer
        return paths.serverPath(parent) == "/" ? paths.origin + "/%2E" : paths.url(parent)
    }

    // MARK: folders

    /// `mkdir`, and the new folder's stat in the same request.
    public func createFolder(_ id: ItemIdentifier) async throws -> Item {
        statCache.forget(paths.serverPath(id))
        do {
            let stat = try await stat(id, quote: ["mkdir \(paths.quoted(id))"], operation: "mkdir")
            return item(id, kind: .folder, stat: stat)
        } catch let error as ProviderError where error.status == SFTPErrors.quoteError && error.kind == .serverError {
            // SFTP v3 says only "Operation failed" for an existing name.
            throw await diagnose(error, exists: id, parentOf: id)
        }
    }

    // MARK: delete

    /// `rm` for files and symlinks, `rmdir` for folders (which fails on a folder with content).
    public func delete(_ item: Item) async throws {
        let id = item.identifier
        let command = item.isFolder ? "rmdir" : "rm"
        statCache.forget(paths.serverPath(id))
        do {
            try await perform(statURL(parentOf: id), [.quote(["\(command) \(paths.quoted(id))"]), .noBody], operation: command, path: id.rawValue)
        } catch let error as ProviderError where error.status == SFTPErrors.quoteError && error.kind == .serverError && item.isFolder {
            let names = try? await SFTPListing.exactNames(id, provider: self)
            if let names, names.contains(where: { $0 != "." && $0 != ".." }) {
                throw ProviderError(.notEmpty, remote: remoteDescription, path: id.rawValue, status: error.status,
                                    detail: "rmdir refused: the folder is not empty (\(error.detail))")
            }
            throw error
        }
    }

    // MARK: move

    /// `rename`, which OpenSSH refuses when the destination exists (so `replacing: false` is
    /// atomic); `replacing: true` removes the destination first (`rm`, or `rmdir` for a folder).
    public func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        let source = item.identifier
        statCache.forget(paths.serverPath(source))
        statCache.forget(paths.serverPath(destination))
        var commands: [String] = []
        if replacing { commands.append("*\(item.isFolder ? "rmdir" : "rm") \(paths.quoted(destination))") }
        commands.append("rename \(paths.quoted(source)) \(paths.quoted(destination))")
        do {
            if item.kind == .symlink {
                try await perform(statURL(parentOf: destination), [.quote(commands), .noBody], operation: "rename", path: source.rawValue)
                var moved = item
                moved.identifier = destination
                return (try? await self.item(for: destination)) ?? moved
            }
            let stat = try await stat(destination, quote: commands, operation: "rename")
            return self.item(destination, kind: item.kind, stat: stat, permissions: item.permissions)
        } catch let error as ProviderError where error.status == SFTPErrors.quoteError && error.kind == .serverError {
            throw await diagnose(error, exists: destination, parentOf: destination, source: source)
        }
    }

    // MARK: symlinks and times

    /// `symlink TARGET LINK` (libcurl's order, which OpenSSH's swapped SSH_FXP_SYMLINK makes right).
    public func createSymlink(_ id: ItemIdentifier, target: String) async throws -> Item {
        do {
            try await perform(statURL(parentOf: id), [.quote(["symlink \(SFTPPaths.quote(target)) \(paths.quoted(id))"]), .noBody],
                              operation: "symlink", path: id.rawValue)
        } catch let error as ProviderError where error.status == SFTPErrors.quoteError && error.kind == .serverError {
            throw await diagnose(error, exists: id, parentOf: id)
        }
        return try await item(for: id)
    }

    /// The `mtime` quote command (libcurl 7.73+): whole seconds, as SFTP v3 keeps them.
    public func setModified(_ id: ItemIdentifier, to time: Timestamp) async throws -> Item {
        statCache.forget(paths.serverPath(id))
        try await perform(statURL(parentOf: id), [.quote([mtimeCommand(id, seconds: time.seconds)]), .noBody],
                          operation: "set mtime", path: id.rawValue)
        // Kind and version as a listing reports them.
        return try await item(for: id)
    }

    /// `mtime "Sun, 13 Sep 2020 12:26:40 GMT" "path"`: libcurl parses the date with curl_getdate.
    func mtimeCommand(_ id: ItemIdentifier, seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return "mtime \(SFTPPaths.quote(formatter.string(from: Date(timeIntervalSince1970: Double(seconds))))) \(paths.quoted(id))"
    }

    // MARK: diagnosis

    /// SFTP v3 answers "exists" and "no parent" alike ("Operation failed"): look at the server.
    func diagnose(_ error: ProviderError, exists target: ItemIdentifier, parentOf: ItemIdentifier, source: ItemIdentifier? = nil) async -> ProviderError {
        if let source, (try? await stat(source)) == nil, (try? await item(for: source)) == nil {
            return ProviderError(.notFound, remote: remoteDescription, path: source.rawValue, status: error.status,
                                 detail: "\(error.detail): the source does not exist")
        }
        if (try? await item(for: target)) != nil {
            return ProviderError(.exists, remote: remoteDescription, path: target.rawValue, status: error.status,
                                 detail: "\(error.detail): \(target.rawValue) exists")
        }
        if let parent = parentOf.parent, (try? await stat(parent)) == nil {
            return ProviderError(.notFound, remote: remoteDescription, path: target.rawValue, status: error.status,
                                 detail: "\(error.detail): the folder \(parent.rawValue) does not exist")
        }
        return error
    }
}
