import Curl
import FavFSCore
import Foundation

/// The write side: PUT (multipart above a threshold), folder markers, DELETE, and moves as
/// copy + delete. S3 keeps no modification times it is given and has no symbolic links:
/// `setModified` and `createSymlink` keep the protocol's defaults (`.notSupported`).
extension S3Provider: WritableProvider {
    // MARK: upload

    /// PUT streamed from the content source's fd, with the precondition checked by the server
    /// atomically with the write (`If-None-Match: *`, `If-Match: <etag>`; S3 and moto both honour
    /// them on PUT). Files above `multipartThreshold` go up in parts (S3Provider+Multipart.swift).
    public func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        guard !id.isRoot else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: id.rawValue, detail: "the root is a folder")
        }
        if source.length > configuration.multipartThreshold {
            return try await multipartUpload(id, from: source, precondition: precondition)
        }
        let path = id.rawValue
        var headers: [CurlHeader] = []
        var meaning: [String: ProviderError.Kind] = [:]
        switch precondition {
        case .mustNotExist:
            headers.append(CurlHeader("If-None-Match", "*"))
            meaning["412"] = .exists
            meaning["PreconditionFailed"] = .exists
        case .mustMatch(let version):
            headers.append(CurlHeader("If-Match", version))
            // 404 NoSuchKey: the file this version belonged to is gone.
            meaning["NoSuchKey"] = .versionChanged
            meaning["404"] = .versionChanged
        case .none:
            break
        }
        let request = request("PUT", url: addressing.objectURL(addressing.fileKey(id)), headers: headers, hasBody: true)
        let response: CurlResponse
        do {
            response = try await transport.upload(request, from: source.fd, length: source.length)
        } catch {
            throw errors.transport(error, method: "PUT", path: path)
        }
        guard (200..<300).contains(response.status) else {
            throw errors.status(response.status, method: "PUT", path: path, body: response.body, meaning: meaning)
        }
        let uploaded = Item(identifier: id, kind: .file, size: source.length, modified: Date().timeIntervalSince1970.rounded(.down),
                            version: response.headers["etag"])
        return await itemAfterChange(id, fallback: uploaded, method: "PUT")
    }

    /// Checks a precondition with a HEAD, for operations whose server check is missing or comes
    /// late (multipart, copies). Another writer between this HEAD and the write is not seen:
    /// that window is one round trip (plus the upload's duration for multipart, see there).
    func checkPrecondition(_ id: ItemIdentifier, _ precondition: UploadPrecondition, method: String) async throws {
        switch precondition {
        case .none:
            return
        case .mustNotExist:
            if try await head(id) != nil {
                throw ProviderError(.exists, remote: remoteDescription, path: id.rawValue,
                                    detail: "\(method) refused: the file exists (HEAD)")
            }
        case .mustMatch(let version):
            let current = try await head(id)
            guard let current, current.version == version else {
                throw ProviderError(.versionChanged, remote: remoteDescription, path: id.rawValue, status: current == nil ? 404 : 200,
                                    detail: "\(method) refused: the file changed on the server (ETag \(current?.version ?? "none, gone"), base version \(version))")
            }
        }
    }

    // MARK: folders

    /// A zero-byte "name/" marker object, so the empty folder is listed. The parent must exist;
    /// a file or folder of the same name gives `.exists`.
    public func createFolder(_ id: ItemIdentifier) async throws -> Item {
        let path = id.rawValue
        guard !id.isRoot else {
            throw ProviderError(.exists, remote: remoteDescription, path: path, detail: "the root folder exists")
        }
        if let parent = id.parent, !parent.isRoot {
            let parentItem = try await item(for: parent)
            guard parentItem.isFolder else {
                throw ProviderError(.notAFolder, remote: remoteDescription, path: path, detail: "the parent is a file")
            }
        }
        if try await head(id) != nil {
            throw ProviderError(.exists, remote: remoteDescription, path: path, detail: "a file of this name exists")
        }
        if try await folderExists(id) {
            throw ProviderError(.exists, remote: remoteDescription, path: path, detail: "the folder exists")
        }
        // If-None-Match: * so that a concurrent mkdir of the same marker is refused, not repeated.
        let marker = request("PUT", url: addressing.objectURL(addressing.folderPrefix(id)),
                             headers: [CurlHeader("If-None-Match", "*")], body: Data())
        let response = try await perform(marker, method: "PUT (folder marker)", path: path)
        guard (200..<300).contains(response.status) else {
            throw errors.status(response.status, method: "PUT (folder marker)", path: path, body: response.body,
                                meaning: ["412": .exists, "PreconditionFailed": .exists])
        }
        return Item(identifier: id, kind: .folder)
    }

    // MARK: delete

    /// A file: DELETE of its key (after a HEAD, because S3 answers 204 for a key that is not
    /// there). A folder: DELETE of its marker, refused with `.notEmpty` while keys remain below.
    public func delete(_ item: Item) async throws {
        let id = item.identifier
        guard !id.isRoot else {
            throw ProviderError(.denied, remote: remoteDescription, path: id.rawValue, detail: "the root folder cannot be deleted")
        }
        if item.isFolder {
            let prefix = addressing.folderPrefix(id)
            let listed = try await list(prefix: prefix, delimiter: nil, maxKeys: 2, token: nil, path: id.rawValue)
            if listed.objects.isEmpty {
                throw ProviderError(.notFound, remote: remoteDescription, path: id.rawValue, detail: "no key below \(prefix)")
            }
            if listed.objects.contains(where: { $0.key != prefix }) {
                throw ProviderError(.notEmpty, remote: remoteDescription, path: id.rawValue, detail: "keys remain below \(prefix)")
            }
            try await deleteKey(prefix, path: id.rawValue)
        } else {
            guard try await head(id) != nil else {
                throw ProviderError(.notFound, remote: remoteDescription, path: id.rawValue, status: 404, detail: "HEAD failed: 404 Not Found")
            }
            try await deleteKey(addressing.fileKey(id), path: id.rawValue)
        }
    }

    /// DELETE of one key (204 also when there was none).
    func deleteKey(_ key: String, path: String) async throws {
        let response = try await perform(request("DELETE", url: addressing.objectURL(key)), method: "DELETE", path: path)
        guard (200..<300).contains(response.status) else {
            throw errors.status(response.status, method: "DELETE", path: path, body: response.body)
        }
    }

    // MARK: helpers

    /// The file as the server has it after a change that succeeded (HEAD, for the mtime). The
    /// change is done, so a failing HEAD must not report it as failed: the caller gets
    /// `fallback`. When the write's own answer named an ETag and the HEAD sees another, someone
    /// else wrote in between: the write's ETag is the truth about our content, so `fallback`.
    func itemAfterChange(_ id: ItemIdentifier, fallback: Item, method: String) async -> Item {
        do {
            if let item = try await head(id) {
                if let written = fallback.version, item.version != written {
                    log.warning("the file changed again right after our write", metadata: [
                        "remote": "\(remoteDescription)", "path": "\(id.rawValue)", "method": "\(method)",
                    ])
                    return fallback
                }
                return item
            }
        } catch {
            log.warning("the item could not be read back after a change that succeeded", metadata: [
                "remote": "\(remoteDescription)", "path": "\(id.rawValue)", "method": "\(method)", "error": "\(error)",
            ])
        }
        return fallback
    }
}
