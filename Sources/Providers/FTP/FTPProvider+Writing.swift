import Curl
import FavFSCore
import Foundation

/// The write side: STOR to a temporary name then RNFR/RNTO into place, MKD, RMD, DELE,
/// RNFR/RNTO, MFMT. Commands go as QUOTE lines with absolute paths, each followed by an MLST of
/// the result where the server has it (one connection round, no extra transfer).
///
/// FTP has no conditional write: preconditions are checked by a stat (MLST, or the parent's
/// LIST) after the upload reached its temporary name and right before the rename. Replacing a
/// known version moves the current file aside first (`replace`), which only one of two writers
/// can do, so the other's edit is never overwritten silently. No symbolic links:
/// `createSymlink` stays `.notSupported`.
extension FTPProvider: WritableProvider {
    // MARK: upload

    /// Streams the source to a temporary name beside the target (`STOR`), checks the
    /// precondition, then renames it into place. A failed or refused upload deletes the
    /// temporary file, so the target is never a half-written file.
    public func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        let path = id.rawValue
        try requireSendable(id)
        guard let parent = id.parent else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: path, detail: "STOR refused: the root is a folder")
        }
        // Beside the target (same file system, so the rename is one); in the remote's root when
        // libcurl cannot put the parent's path in the STOR URL (a tab in a folder name).
        let temporaryName = Self.temporaryPrefix + UUID().uuidString.prefix(12).lowercased()
        let temporary = FTPPaths.fitsInURL(paths.serverPath(parent)) ? parent.child(temporaryName) : ItemIdentifier.rootContainer.child(temporaryName)
        // The server's 226 is not proof: over FTPS with TLS 1.3, libcurl's close of the data
        // connection lost the upload's tail (now capped at TLS 1.2, see FTPProvider.request),
        // and other causes may remain. A short file is never renamed into place: the transfer
        // is tried again, and then the upload fails (transient).
        var attempt = 0
        while true {
            attempt += 1
            do {
                _ = try await transport.upload(request(paths.url(for: temporary, isFolder: false), []), from: source.fd, length: source.length)
            } catch {
                await removeTemporary(temporary)
                var mapped = errors.transport(error, command: "STOR", path: path)
                // A refused CWD into the parent: it is not there (or not a folder).
                if (error as? TransportError)?.code == 9, mapped.kind == .denied { mapped.kind = .notFound }
                throw mapped
            }
            let stored: Item?
            do { stored = try await existing(temporary) } catch { await removeTemporary(temporary); throw error }
            if let stored, stored.size == source.length { break }
            log.warning("an upload arrived short; sending it again", metadata: [
                "remote": "\(remoteDescription)", "path": "\(path)", "stored": "\(stored?.size ?? -1)", "length": "\(source.length)",
            ])
            if attempt >= 3 {
                await removeTemporary(temporary)
                throw ProviderError(.serverError, remote: remoteDescription, path: path,
                                    detail: "STOR: the server stored \(stored.map { String($0.size) } ?? "nothing") of \(source.length) bytes, \(attempt) times")
            }
        }
        let current: Item?
        do {
            current = try await existing(id)
        } catch {
            await removeTemporary(temporary)
            throw error
        }
        do {
            switch precondition {
            case .mustNotExist:
                if let current {
                    throw ProviderError(.exists, remote: remoteDescription, path: path,
                                        detail: "STOR refused: a \(current.kind.rawValue) is there already")
                }
            case .mustMatch(let version):
                guard let current, current.kind == .file, current.version == version else {
                    throw ProviderError(.versionChanged, remote: remoteDescription, path: path,
                                        detail: "STOR refused: the file changed on the server (now \(current?.version ?? "gone"), base version \(version))")
                }
            case .none:
                break
            }
            if let current, current.kind == .folder {
                throw ProviderError(.isAFolder, remote: remoteDescription, path: path, detail: "STOR refused: a folder is there")
            }
            if case .mustMatch(let version) = precondition {
                return try await replace(id, with: temporary, base: version, length: source.length)
            }
            let fallback = Item(identifier: id, kind: .file, size: source.length)
            return try await rename(temporary, to: id, replacingFile: current != nil, command: "STOR", fallback: fallback)
        } catch {
            await removeTemporary(temporary)
            throw error
        }
    }

    /// Replaces version `base` of `id` with the uploaded `temporary`: `RNFR id`/`RNTO aside` (of
    /// two writers only one can move the file away; for the other it is gone), a stat of what was
    /// moved aside, then `RNFR temporary`/`RNTO id` and `DELE aside`. When what was moved aside is
    /// not `base` (another edit saved since our check), it is put back and the upload refused with
    /// `.versionChanged`, so ours becomes a conflict copy. For one round trip the name does not
    /// exist. The caller removes `temporary` when this throws.
    private func replace(_ id: ItemIdentifier, with temporary: ItemIdentifier, base: String, length: Int64) async throws -> Item {
        let path = id.rawValue
        let aside = temporary.parent.map { $0.child(Self.temporaryPrefix + "aside-" + UUID().uuidString.prefix(8).lowercased()) }
            ?? ItemIdentifier.rootContainer.child(Self.temporaryPrefix + "aside-" + UUID().uuidString.prefix(8).lowercased())
        let target = paths.serverPath(id), asidePath = paths.serverPath(aside)
        do {
            _ = try await commands(["RNFR \(target)", "RNTO \(asidePath)"], command: "RNFR/RNTO (move the current file aside)", path: path)
        } catch let error as ProviderError where error.status.map({ (500..<600).contains($0) }) == true {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: error.status,
                                detail: "STOR refused: the file is gone or being replaced by someone else (\(error.detail))")
        }
        let displaced = try? await existing(aside)
        guard let displaced, displaced.version == base else {
            do {
                _ = try await commands(["RNFR \(asidePath)", "RNTO \(target)"], command: "RNFR/RNTO (put the other edit back)", path: path)
            } catch {
                log.warning("another client's edit could not be put back under its name; it is kept hidden beside it", metadata: [
                    "remote": "\(remoteDescription)", "path": "\(path)", "kept as": "\(aside.rawValue)", "error": "\(error)",
                ])
            }
            throw ProviderError(.versionChanged, remote: remoteDescription, path: path,
                                detail: "STOR refused: the file changed on the server (now \(displaced?.version ?? "unreadable"), base version \(base))")
        }
        let fallback = Item(identifier: id, kind: .file, size: length)
        let item = try await rename(temporary, to: id, replacingFile: false, command: "STOR", fallback: fallback)
        await removeTemporary(aside)
        return item
    }

    /// Deletes an upload's temporary file; a failure is only logged (it is hidden from listings).
    private func removeTemporary(_ temporary: ItemIdentifier) async {
        do {
            _ = try await commands(["*DELE \(paths.serverPath(temporary))"], command: "DELE", path: temporary.rawValue)
        } catch {
            log.warning("an upload's temporary file could not be removed", metadata: [
                "remote": "\(remoteDescription)", "path": "\(temporary.rawValue)", "error": "\(error)",
            ])
        }
    }

    // MARK: folders

    /// MKD; a refusal is explained by a stat (`.exists` when something is there).
    public func createFolder(_ id: ItemIdentifier) async throws -> Item {
        let path = id.rawValue
        try requireSendable(id)
        let serverPath = paths.serverPath(id)
        do {
            let lines = try await commands(["MKD \(serverPath)"] + (try await mlst(serverPath)), command: "MKD", path: path)
            return try await itemAfterChange(id, lines: lines, fallback: Item(identifier: id, kind: .folder), command: "MKD")
        } catch let error as ProviderError where error.status.map({ $0 >= 500 }) == true {
            if (try? await existing(id)) != nil {
                throw ProviderError(.exists, remote: remoteDescription, path: path, status: error.status,
                                    detail: "MKD refused: something is there already (\(error.detail))")
            }
            if let parent = id.parent, !parent.isRoot, (try? await existing(parent)) == nil {
                throw ProviderError(.notFound, remote: remoteDescription, path: path, status: error.status,
                                    detail: "MKD refused: the parent folder is not there (\(error.detail))")
            }
            throw error
        }
    }

    // MARK: delete

    /// DELE for a file or symlink, RMD for a folder (a non-empty one is refused: `.notEmpty`).
    public func delete(_ item: Item) async throws {
        let path = item.identifier.rawValue
        try requireSendable(item.identifier)
        let command = item.isFolder ? "RMD" : "DELE"
        do {
            _ = try await commands(["\(command) \(paths.serverPath(item.identifier))"], command: command, path: path)
        } catch let error as ProviderError where item.isFolder && error.status == 550 && error.kind != .notEmpty {
            // Servers word "not empty" differently (vsftpd: "Remove directory operation
            // failed", which reads like a missing folder): look.
            if let children = try? await list(item.identifier), children.contains(where: { $0.kind != .selfOrParent }) {
                throw ProviderError(.notEmpty, remote: remoteDescription, path: path, status: 550, detail: "RMD refused: the folder is not empty (\(error.detail))")
            }
            throw error
        }
    }

    // MARK: move

    /// RNFR/RNTO. Without `replacing`, an existing destination is refused (`.exists`) by a
    /// stat first: RNTO itself replaces files on most servers (the race window is one round trip).
    public func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        try requireSendable(item.identifier)
        try requireSendable(destination)
        let target = try await existing(destination)
        if let target {
            if !replacing {
                throw ProviderError(.exists, remote: remoteDescription, path: destination.rawValue,
                                    detail: "RNTO refused: a \(target.kind.rawValue) is there already")
            }
            if target.kind == .folder && !item.isFolder {
                throw ProviderError(.isAFolder, remote: remoteDescription, path: destination.rawValue, detail: "RNTO refused: a folder is there")
            }
        }
        var moved = item
        moved.identifier = destination
        return try await rename(item.identifier, to: destination, replacingFile: target != nil && target?.kind != .folder,
                                command: "RNTO", fallback: moved)
    }

    // MARK: times

    /// MFMT (where FEAT lists it): the modification time, in whole seconds UTC.
    public func setModified(_ id: ItemIdentifier, to time: Timestamp) async throws -> Item {
        let seconds = Double(time.seconds)
        try requireSendable(id)
        guard try await features().setModified else {
            throw ProviderError(.notSupported, remote: remoteDescription, path: id.rawValue,
                                detail: "this FTP server cannot set modification times (no MFMT in FEAT)")
        }
        let serverPath = paths.serverPath(id)
        let lines: [String]
        do {
            lines = try await commands(["MFMT \(FTPTime.stamp(seconds)) \(serverPath)"] + (try await mlst(serverPath)), command: "MFMT", path: id.rawValue)
        } catch let e as ProviderError where e.kind == .notFound {
            // pyftpdlib answers 550 to MFMT of a folder: it sets the times of files only.
            guard let there = try? await item(for: id) else { throw e }
            throw ProviderError(.notSupported, remote: remoteDescription, path: id.rawValue,
                                detail: "this FTP server cannot set the modification time of a \(there.kind == .folder ? "folder" : "such item") (MFMT: \(e.detail))")
        }
        if let item = try await itemFromReplies(id, lines: lines) { return item }
        return try await item(for: id)
    }

    // MARK: helpers

    /// RNFR/RNTO plus an MLST of the result. A server that refuses to rename onto an existing
    /// file (Windows servers) gets DELE of the destination and the rename once more.
    private func rename(_ from: ItemIdentifier, to destination: ItemIdentifier, replacingFile: Bool, command: String,
                        fallback: Item) async throws -> Item {
        let source = paths.serverPath(from), target = paths.serverPath(destination)
        let renameLines = ["RNFR \(source)", "RNTO \(target)"]
        do {
            let lines = try await commands(renameLines + (try await mlst(target)), command: command, path: destination.rawValue)
            return try await itemAfterChange(destination, lines: lines, fallback: fallback, command: command)
        } catch let error as ProviderError where replacingFile && error.status.map({ $0 == 550 || $0 == 553 }) == true
            && error.kind != .notFound {
            log.notice("the server refused to rename onto an existing file; deleting it first", metadata: [
                "remote": "\(remoteDescription)", "path": "\(destination.rawValue)", "error": "\(error)",
            ])
            let lines = try await commands(["DELE \(target)"] + renameLines + (try await mlst(target)), command: command, path: destination.rawValue)
            return try await itemAfterChange(destination, lines: lines, fallback: fallback, command: command)
        }
    }

    /// `MLST path` where the server has it (its reply rides along with the change's commands).
    private func mlst(_ serverPath: String) async throws -> [String] {
        try await features().machineListings ? ["*MLST \(serverPath)"] : []
    }

    private func itemFromReplies(_ id: ItemIdentifier, lines: [String]) async throws -> Item? {
        guard let entry = FTPReply.mlstEntries(lines).last, var item = entry.item(id) else { return nil }
        if case .selfOrParent = entry.kind { item.kind = .folder }
        return item
    }

    /// The item as the server has it after a change that succeeded: from the MLST that followed
    /// it, else from a stat. The change is done, so a failing stat must not report it as failed:
    /// the caller gets `fallback` and the next listing refreshes it.
    private func itemAfterChange(_ id: ItemIdentifier, lines: [String], fallback: Item, command: String) async throws -> Item {
        if let item = try await itemFromReplies(id, lines: lines) { return item }
        do {
            return try await item(for: id)
        } catch {
            log.warning("the item could not be read back after a change that succeeded", metadata: [
                "remote": "\(remoteDescription)", "path": "\(id.rawValue)", "command": "\(command)", "error": "\(error)",
            ])
            return fallback
        }
    }

    private func requireSendable(_ id: ItemIdentifier) throws {
        if let problem = FTPPaths.unsendable(id.rawValue) {
            throw ProviderError(.invalidName, remote: remoteDescription, path: id.rawValue, detail: problem)
        }
    }
}
