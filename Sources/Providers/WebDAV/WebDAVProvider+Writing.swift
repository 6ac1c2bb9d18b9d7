import Curl
import FavFSCore
import Foundation

/// The write side: PUT, MKCOL, DELETE, MOVE. Each call is one remote operation (plus a
/// HEAD, or for a folder a PROPFIND Depth 0, for the resulting item's size, mtime and ETag). Apache mod_dav keeps no
/// modification times it is given and has no symbolic links: `setModified` and `createSymlink`
/// keep the protocol's defaults (`.notSupported`).
extension WebDAVProvider: WritableProvider {
    /// Apache refuses a request line over 8,190 bytes (`LimitRequestLine`, 414), and most
    /// servers have a limit near it: a longer URL could never be uploaded.
    public func storageProblem(_ id: ItemIdentifier, kind: ItemKind) -> ProviderError? {
        let length = paths.url(for: id, isFolder: kind == .folder).utf8.count
        guard length > Self.maxURLLength else { return nil }
        return ProviderError(.nameTooLong, remote: remoteDescription, path: id.rawValue,
                             detail: "its URL would be \(length) bytes; servers refuse request lines over about 8 KB (Apache: 414)")
    }

    /// The longest URL favfs sends: Apache's default request line (8,190) less the method and
    /// protocol around it.
    static let maxURLLength = 8_000

    // MARK: upload

    /// PUT from the content source, streamed from its fd. The server checks the precondition
    /// with the write: `If-None-Match: *` for a new file; for an existing one the version is
    /// compared under a WebDAV write lock (see WebDAVProvider+Locking.swift), or, where the
    /// server has no locks, with `If-Match` (see `strongTag` for Apache's weak ETags).
    public func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        let path = id.rawValue
        var headers: [CurlHeader] = []
        var meaning: [Int: ProviderError.Kind] = [409: .notFound, 413: .tooLarge, 507: .noSpace]
        var held: WriteLock?
        switch precondition {
        case .mustNotExist:
            // Two clients creating one name at the same moment can both pass this (the window
            // of one PUT's transfer): a LOCK of a missing file would create it empty.
            headers.append(CurlHeader("If-None-Match", "*"))
            meaning[412] = .exists
            if !listingsHaveETags.value {
                // Servers without ETags (nginx) ignore If-None-Match: look first.
                try await requireAbsent(id)
            }
        case .mustMatch(let version):
            if let lock = try await lockForWriting(id) {
                held = lock
                do {
                    // Nobody who honours locks can change it now: compare, then write.
                    _ = try await currentTag(id, base: version)
                } catch {
                    await unlock(id, lock)
                    throw error
                }
                headers.append(CurlHeader("If", "(\(lock.token))"))
                meaning[412] = .versionChanged
            } else if WebDAVETag.isSynthetic(version) {
                // No ETags and no locks (nginx, which also ignores If-Match): the size and mtime
                // compared in a PROPFIND right before the PUT; the round trip between is the
                // window `noteListingsLackETags` logs.
                _ = try await currentTag(id, base: version)
            } else if WebDAVETag.isWeak(version) {
                // If-Match compares strongly, so a weak tag never matches.
                if let strong = try await strongTag(id, base: version) {
                    headers.append(CurlHeader("If-Match", strong))
                    meaning[412] = .versionChanged
                }
            } else {
                headers.append(CurlHeader("If-Match", version))
                meaning[412] = .versionChanged
            }
        case .none:
            break
        }
        let request = CurlRequest(method: "PUT", url: paths.url(for: id, isFolder: false), headers: headers,
                                  credentials: configuration.credentials)
        let result: Result<CurlResponse, Error>
        do {
            result = .success(try await transport.upload(request, from: source.fd, length: source.length))
        } catch {
            result = .failure(error)
        }
        if let held { await unlock(id, held) }
        let response: CurlResponse
        switch result {
        case .success(let r): response = r
        case .failure(let error): throw errors.transport(error, method: "PUT", path: path)
        }
        if response.status == 412, held != nil, case .mustMatch(let base) = precondition {
            throw try await lostLock(id, base: base)
        }
        guard (200..<300).contains(response.status) else {
            throw errors.status(response.status, method: "PUT", path: path, body: response.body, meaning: meaning)
        }
        let uploaded = Item(identifier: id, kind: .file, size: source.length, version: response.headers["etag"])
        return await itemAfterChange(id, isFolder: false, fallback: uploaded, method: "PUT")
    }

    /// The error for a PUT refused (412) although it carried the lock just granted for it and
    /// the version was checked under that lock. Apache's lock database (mod_dav_fs) loses or
    /// misfiles locks when several clients lock files at once — the token is then unknown, and
    /// the lock may sit on another file until it times out — so a 412 here is no proof of a
    /// change: the version is checked again. Unchanged: `.locked`, which the upload loop tries
    /// again (a conflict copy would be made for nothing); changed: `.versionChanged`.
    private func lostLock(_ id: ItemIdentifier, base: String) async throws -> ProviderError {
        _ = try await currentTag(id, base: base)
        log.notice("the server refused the write lock it had just granted (PUT with its token: 412); the file is unchanged, the upload is tried again", metadata: [
            "remote": "\(remoteDescription)", "path": "\(id.rawValue)"])
        return ProviderError(.locked, remote: remoteDescription, path: id.rawValue, status: 412,
                             detail: "PUT refused (412) although it carried the write lock just granted for it, and the file is unchanged: the server lost the lock (Apache's lock database does so when several clients lock files at once); tried again")
    }

    /// Throws `.exists` when something is at `id` (for servers that ignore `If-None-Match`).
    private func requireAbsent(_ id: ItemIdentifier) async throws {
        do {
            let there = try await single(id, isFolder: false)
            throw ProviderError(.exists, remote: remoteDescription, path: id.rawValue, status: 207,
                                detail: "PUT not sent: a \(there.kind.rawValue) was created there meanwhile")
        } catch let error as ProviderError where error.kind == .notFound {
            return
        } catch let error as ProviderError where error.status.map({ (300..<400).contains($0) }) == true {
            throw ProviderError(.exists, remote: remoteDescription, path: id.rawValue, status: error.status,
                                detail: "PUT not sent: a folder is there")
        }
    }

    /// The file's tag now, when it still is `base` (compared weakly); else `.versionChanged`.
    private func currentTag(_ id: ItemIdentifier, base: String) async throws -> String {
        let current: Item
        do {
            current = try await single(id, isFolder: false)
        } catch let error as ProviderError where error.kind == .notFound || error.status == 301 {
            // Gone since it was read (or a folder now: Apache answers a folder's file URL with 301).
            throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue, status: error.status,
                                detail: "PUT not sent: the file is no longer there (PROPFIND: \(error.status.map { "\($0) \(WebDAVErrors.reason($0))" } ?? error.detail)); its base version was \(base)")
        }
        guard current.kind == .file, let now = current.version, WebDAVETag.weaklyEqual(now, base) else {
            throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue, status: 207,
                                detail: "PUT not sent: the file changed on the server (ETag \(current.version ?? "none"), base version \(base))")
        }
        return now
    }

    /// For a server without locks: the strong form of `base` for `If-Match`. Apache gives the
    /// strong form of the same tag once the file is a second old, so this waits for it. Nil when
    /// the tag stays weak for `strongTagWait`: a server whose tags are always weak gets an
    /// unconditional PUT after this check, and a change in the one round trip between them is
    /// overwritten (the window docs/when-things-go-wrong.md documents).
    private func strongTag(_ id: ItemIdentifier, base: String) async throws -> String? {
        let deadline = Date().addingTimeInterval(Self.strongTagWait)
        while true {
            let now = try await currentTag(id, base: base)
            if !WebDAVETag.isWeak(now) { return now }
            if Date() >= deadline {
                log.info("the server keeps a weak ETag; PUT after a version check, without If-Match", metadata: [
                    "remote": "\(remoteDescription)", "path": "\(id.rawValue)", "etag": "\(now)",
                ])
                return nil
            }
            try await Task.sleep(nanoseconds: 250_000_000)
        }
    }

    /// How long to wait for a weak ETag to turn strong: Apache's takes one second.
    static let strongTagWait: TimeInterval = 2.5

    // MARK: folders

    /// MKCOL at the folder URL.
    public func createFolder(_ id: ItemIdentifier) async throws -> Item {
        let path = id.rawValue
        let request = CurlRequest(method: "MKCOL", url: paths.url(for: id, isFolder: true), credentials: configuration.credentials)
        let response: CurlResponse
        do {
            response = try await transport.perform(request)
        } catch {
            throw errors.transport(error, method: "MKCOL", path: path)
        }
        guard (200..<300).contains(response.status) else {
            // 405: something is there already; 409: the parent is missing.
            let error = errors.status(response.status, method: "MKCOL", path: path, body: response.body,
                                      meaning: [405: .exists, 409: .notFound, 507: .noSpace])
            throw await diagnose(error, target: id, targetMustNotExist: true)
        }
        return await itemAfterChange(id, isFolder: true, fallback: Item(identifier: id, kind: .folder), method: "MKCOL")
    }

    // MARK: delete

    /// DELETE at the file URL, or the folder URL for a folder (the core checked it is empty:
    /// WebDAV would delete a whole tree).
    public func delete(_ item: Item) async throws {
        let path = item.identifier.rawValue
        // DELETE of a collection removes the whole tree; rmdir must not. Checked right before
        // (a child created at the remote in between is deleted with it: documented).
        if item.isFolder, !(try await enumerateItems(in: item.identifier, page: nil).items.isEmpty) {
            throw ProviderError(.notEmpty, remote: remoteDescription, path: path, detail: "the folder is not empty")
        }
        let request = CurlRequest(method: "DELETE", url: paths.url(for: item.identifier, isFolder: item.isFolder),
                                  credentials: configuration.credentials)
        let response: CurlResponse
        do {
            response = try await transport.perform(request)
        } catch {
            throw errors.transport(error, method: "DELETE", path: path)
        }
        guard (200..<300).contains(response.status) else {
            throw errors.status(response.status, method: "DELETE", path: path, body: response.body)
        }
    }

    // MARK: move

    /// MOVE with an absolute, percent-encoded `Destination` and `Overwrite: T` or `F`.
    public func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        let path = item.identifier.rawValue
        let request = CurlRequest(method: "MOVE", url: paths.url(for: item.identifier, isFolder: item.isFolder),
                                  headers: [CurlHeader("Destination", paths.url(for: destination, isFolder: item.isFolder)),
                                            CurlHeader("Overwrite", replacing ? "T" : "F")],
                                  credentials: configuration.credentials)
        let response: CurlResponse
        do {
            response = try await transport.perform(request)
        } catch {
            throw errors.transport(error, method: "MOVE", path: path)
        }
        guard (200..<300).contains(response.status) else {
            // 412: Overwrite F and the destination exists; 409: the destination's parent is
            // missing; 502: the destination is on another server.
            let error = errors.status(response.status, method: "MOVE", path: path, body: response.body,
                                      meaning: [412: .exists, 409: .notFound, 502: .crossDevice, 507: .noSpace])
            throw await diagnose(error, target: destination, targetMustNotExist: !replacing)
        }
        var moved = item
        moved.identifier = destination
        // A PROPFIND, not a HEAD: a time kept as a dead property moved with the file.
        return await itemAfterChange(destination, isFolder: item.isFolder, fallback: moved, method: "MOVE", deadProperties: true)
    }

    // MARK: helpers

    /// The item as the server has it after a change that succeeded (PROPFIND Depth 0). The change
    /// is done, so a failing PROPFIND must not report it as failed: the caller gets what is known
    /// (`fallback`) and the next listing refreshes it.
    func itemAfterChange(_ id: ItemIdentifier, isFolder: Bool, fallback: Item, method: String,
                         deadProperties: Bool = false) async -> Item {
        // A HEAD's ETag is the version only where listings carry ETags too (nginx: its GET has
        // one, its PROPFIND none); until a listing said which, the PROPFIND.
        if !isFolder, !deadProperties || timesNotKept.value, listingsHaveETags.value || listingsLackETags.value,
           let item = await headItem(id) { return item }
        do {
            return try await single(id, isFolder: isFolder)
        } catch {
            log.warning("the item could not be read back after a change that succeeded", metadata: [
                "remote": "\(remoteDescription)", "path": "\(id.rawValue)", "method": "\(method)", "error": "\(error)",
            ])
            return fallback
        }
    }

    /// A file's size, mtime and ETag from a HEAD: what a PUT's answer lacks (Apache sends no
    /// ETag with it), for a fraction of a PROPFIND's cost on both ends (no dead-property lookup,
    /// no XML to write, spool and parse; copying 2,000 small files spent 8% of favfs's CPU on
    /// those PROPFINDs). The ETag is the one conditional requests compare (Apache gives PROPFIND
    /// the same). Nil, for a PROPFIND instead, unless the answer is a 200 with an ETag and a length.
    private func headItem(_ id: ItemIdentifier) async -> Item? {
        let request = CurlRequest(method: "HEAD", url: paths.url(for: id, isFolder: false), credentials: configuration.credentials)
        guard let response = try? await transport.perform(request), response.status == 200,
              let etag = response.headers["etag"], !etag.isEmpty,
              let length = response.headers["content-length"].flatMap({ Int64($0) }), length >= 0 else { return nil }
        let modified = response.headers["last-modified"].flatMap(HTTPDate.parse)
        // A server whose listings have no ETag: the version its listings will show (nginx's GET
        // ETag is not one its PROPFIND gives).
        let version = listingsLackETags.value ? WebDAVETag.synthetic(size: length, modified: modified) : etag
        return Item(identifier: id, kind: .file, size: length, modified: modified, version: version)
    }
}
