import Curl
import FavFSCore
import Foundation

/// The write side: `upload` (sessions above `sessionThreshold`), `create_folder_v2`,
/// `delete_v2`, `move_v2`. Dropbox checks preconditions with the write: `add` refuses an
/// existing file, `update` a revision other than the one given (`strict_conflict`, so a file
/// deleted meanwhile is a conflict too, and `autorename` off, so nothing is renamed aside).
extension DropboxProvider: WritableProvider {
    /// Dropbox's largest file: 2^41 − 2^22 bytes (UploadSessionLookupError.too_large).
    public var maxFileSize: Int64? { (1 << 41) - (1 << 22) }

    public func storageProblem(_ id: ItemIdentifier, kind: ItemKind) -> ProviderError? {
        guard let why = DropboxNames.problem(id.name) else { return nil }
        return ProviderError(.invalidName, remote: remoteDescription, path: id.rawValue, detail: why)
    }

    // MARK: upload

    public func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        let path = id.rawValue
        guard !id.isRoot else { throw ProviderError(.isAFolder, remote: remoteDescription, path: path, detail: "the root is a folder") }
        if let problem = storageProblem(id, kind: .file) { throw problem }
        if let max = maxFileSize, source.length > max {
            throw ProviderError(.tooLarge, remote: remoteDescription, path: path, detail: "Dropbox stores files of at most \(max) bytes; this one is \(source.length)")
        }
        var commit: [String: Any] = ["path": paths.path(id), "autorename": false, "mute": true, "strict_conflict": true]
        var meaning: [String: ProviderError.Kind] = [:]
        switch precondition {
        case .mustNotExist:
            commit["mode"] = "add"
        case .mustMatch(let rev):
            commit["mode"] = [".tag": "update", "update": rev]
            meaning["file"] = .versionChanged
        case .none:
            commit["mode"] = "overwrite"
        }
        // The cached file's content_hash: sent with a one-call upload (Dropbox then writes
        // nothing whose bytes differ) and compared with what Dropbox says it stored.
        let fd = source.fd, length = source.length
        guard let sent = try await BlockingWork.run({ DropboxContentHash.of(fd: fd, length: length) }) else {
            throw ProviderError(.localIO, remote: remoteDescription, path: path, detail: "upload: cannot read the cached file: \(String(cString: strerror(errno)))")
        }
        let response: CurlResponse
        let route: String
        if source.length > configuration.sessionThreshold {
            (route, response) = try await uploadInSession(id, source: source, commit: commit)
        } else {
            route = "files/upload"
            commit["content_hash"] = sent
            response = try await client.send(route, path: path) { token in
                let request = self.client.contentRequest(route, commit, token: token,
                                                         headers: [CurlHeader("Content-Type", "application/octet-stream")])
                return try await self.client.transport.upload(request, from: source.fd, length: source.length)
            }
        }
        guard response.status == 200 else {
            var error = errors.status(response, route: route, path: path, meaning: meaning)
            if error.kind == .versionChanged {
                error.detail += " — the file is no longer at the revision this upload replaces; it changed on Dropbox"
            }
            if DropboxErrors.tags(response.body).contains("content_hash_mismatch") {
                error.detail += " — the bytes Dropbox received differ from the cached file (damaged on the way); nothing was written, and the upload is tried again"
            }
            throw error
        }
        let stored = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["content_hash"] as? String
        if let stored, stored != sent {
            throw ProviderError(.serverError, remote: remoteDescription, path: path, status: 200,
                                detail: "\(route): Dropbox stored content whose content_hash (\(stored)) is not the cached file's (\(sent)); the cached file stays and is uploaded again")
        }
        return try item(from: response.body, id: id, request: route)
    }

    /// `upload_session/start`, `append_v2` per chunk, `finish` with the commit: each request
    /// carries one slice of the file from its offset, and Dropbox checks each offset.
    private func uploadInSession(_ id: ItemIdentifier, source: ContentSource, commit: [String: Any]) async throws -> (String, CurlResponse) {
        let path = id.rawValue
        let chunk = max(1, min(configuration.sessionChunkSize, 150 * 1024 * 1024))
        let first = min(chunk, source.length)
        let session = try await startSession(fd: source.fd, length: first, path: path)
        var offset = first
        // The last slice goes with `finish`.
        while source.length - offset > chunk {
            try await appendToSession(session, fd: source.fd, offset: offset, length: chunk, path: path)
            offset += chunk
        }
        let finished = try await finishSession(session, fd: source.fd, offset: offset, length: source.length - offset, commit: commit, path: path)
        return ("files/upload_session/finish", finished)
    }

    /// One session request carrying `length` bytes of `fd` from `offset`.
    private func sessionCall(_ route: String, _ argument: Any, fd: Int32, offset: Int64, length: Int64, path: String) async throws -> CurlResponse {
        try await client.send(route, path: path) { token in
            try await self.client.transport.upload(self.client.contentRequest(route, argument, token: token,
                                                                              headers: [CurlHeader("Content-Type", "application/octet-stream")]),
                                                   from: fd, length: length, offset: offset)
        }
    }

    /// `upload_session/start` with the first `length` bytes of `fd`: the session's id.
    func startSession(fd: Int32, length: Int64, path: String) async throws -> String {
        let route = "files/upload_session/start"
        let started = try await sessionCall(route, ["close": false], fd: fd, offset: 0, length: length, path: path)
        guard started.status == 200 else { throw errors.status(started, route: route, path: path) }
        guard let object = try? JSONSerialization.jsonObject(with: started.body) as? [String: Any],
              let session = object["session_id"] as? String, !session.isEmpty else {
            throw errors.invalid("no session_id", request: route, path: path, status: 200)
        }
        return session
    }

    /// `upload_session/append_v2` of `length` bytes of `fd` from `offset` (the session's offset).
    func appendToSession(_ session: String, fd: Int32, offset: Int64, length: Int64, path: String) async throws {
        let route = "files/upload_session/append_v2"
        let appended = try await sessionCall(route, ["cursor": ["session_id": session, "offset": offset], "close": false],
                                             fd: fd, offset: offset, length: length, path: path)
        guard appended.status == 200 else { throw errors.status(appended, route: route, path: path) }
    }

    /// `upload_session/finish` with the last bytes and the commit (its answer, whatever it is).
    func finishSession(_ session: String, fd: Int32, offset: Int64, length: Int64, commit: [String: Any], path: String) async throws -> CurlResponse {
        try await sessionCall("files/upload_session/finish", ["cursor": ["session_id": session, "offset": offset], "commit": commit],
                              fd: fd, offset: offset, length: length, path: path)
    }

    // MARK: folders, delete, move

    public func createFolder(_ id: ItemIdentifier) async throws -> Item {
        let path = id.rawValue
        if let problem = storageProblem(id, kind: .folder) { throw problem }
        let response = try await client.rpc("files/create_folder_v2", ["path": paths.path(id), "autorename": false], path: path)
        guard response.status == 200 else { throw errors.status(response, route: "files/create_folder_v2", path: path) }
        return try item(from: response.body, id: id, request: "files/create_folder_v2")
    }

    /// `delete_v2` removes a folder with everything in it, so a folder is listed first and
    /// refused when it has anything (`.notEmpty`); an entry added between the two (one round
    /// trip) goes with it.
    public func delete(_ item: Item) async throws {
        let path = item.identifier.rawValue
        guard !item.identifier.isRoot else {
            throw ProviderError(.notSupported, remote: remoteDescription, path: path, detail: "the root cannot be deleted")
        }
        if item.isFolder, try await hasEntries(item.identifier) {
            throw ProviderError(.notEmpty, remote: remoteDescription, path: path, status: 200,
                                detail: "files/delete_v2 not sent: the folder is not empty (files/list_folder), and Dropbox would delete everything in it")
        }
        let response = try await client.rpc("files/delete_v2", ["path": paths.path(item.identifier)], path: path)
        guard response.status == 200 else { throw errors.status(response, route: "files/delete_v2", path: path) }
    }

    /// Whether a folder lists anything. A page may be empty and still have more (Dropbox
    /// chooses page sizes), so pages are followed until an entry or the end; at most 100, after
    /// which the folder counts as not empty (refusing is the safe answer).
    private func hasEntries(_ folder: ItemIdentifier) async throws -> Bool {
        var page: Page?
        for _ in 0..<100 {
            let listed = try await enumerateItems(in: folder, page: page)
            if !listed.items.isEmpty || !listed.skipped.isEmpty { return true }
            guard let next = listed.nextPage else { return false }
            page = next
        }
        return true
    }

    /// `move_v2`: atomic at Dropbox, folders included. Replacing an existing file deletes it
    /// first (Dropbox never moves over anything), so another client may see the name missing
    /// for one round trip.
    public func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        let path = item.identifier.rawValue
        if let problem = storageProblem(destination, kind: item.kind) { throw problem }
        let argument: [String: Any] = ["from_path": paths.path(item.identifier), "to_path": paths.path(destination),
                                       "autorename": false, "allow_ownership_transfer": false]
        var response = try await client.rpc("files/move_v2", argument, path: path)
        if replacing, response.status == 409, DropboxErrors.tags(response.body) == ["to", "conflict", "file"] {
            let existing = try await self.item(for: destination)
            guard existing.kind == .file else {
                throw ProviderError(.exists, remote: remoteDescription, path: destination.rawValue, detail: "files/move_v2: a folder is in the way")
            }
            try await delete(existing)
            response = try await client.rpc("files/move_v2", argument, path: path)
        }
        guard response.status == 200 else { throw errors.status(response, route: "files/move_v2", path: path) }
        return try self.item(from: response.body, id: destination, request: "files/move_v2")
    }
}
