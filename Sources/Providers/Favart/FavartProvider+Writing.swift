import Curl
import FavFSCore
import Foundation

/// The write side: `POST /file` (upload), `POST /media` (mkdir), `DELETE /media`. The API has no
/// preconditions, no rename, no symlinks and keeps no mtimes it is told, so:
/// - upload preconditions are checked with a listing of the parent right before the POST. A
///   change by someone else between the two (one round trip) is overwritten: the race is the
///   price of an API without `If-Match`;
/// - `move` is `.notSupported` (ENOTSUP): a copy-and-delete would not be atomic, could not move
///   folders, and an interrupted one leaves two files or none;
/// - `setModified` and `createSymlink` keep the protocol's defaults (`.notSupported`).
extension FavartProvider: WritableProvider {
    public var maxFileSize: Int64? { Self.maxUploadSize }

    /// Files only under lower-case image names, folders never under one: anything else the
    /// server stores but lists wrongly or not at all.
    public func storageProblem(_ id: ItemIdentifier, kind: ItemKind) -> ProviderError? {
        switch kind {
        case .file where !FavartNames.isImage(id.name):
            return ProviderError(.notSupported, remote: remoteDescription, path: id.rawValue,
                                 detail: "the Favart API stores only .jpg/.jpeg/.png files, in lower case (its filter is case-sensitive): '\(id.name)' would never be listed")
        case .folder where FavartNames.isImage(id.name):
            return ProviderError(.notSupported, remote: remoteDescription, path: id.rawValue,
                                 detail: "the Favart API lists names ending in .jpg/.jpeg/.png as files: a folder '\(id.name)' would look like a file")
        default:
            return nil
        }
    }

    // MARK: upload

    /// `POST /file?path=DIR&id=NAME` with the raw body streamed from the source fd.
    /// Refused before sending anything: names the API would not list (`.notSupported`) and
    /// content over 25 MiB (`.tooLarge`).
    public func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        let path = id.rawValue
        guard let parent = id.parent else {
            throw ProviderError(.isAFolder, remote: remoteDescription, path: path, detail: "the root is a folder")
        }
        if let problem = storageProblem(id, kind: .file) { throw problem }
        guard source.length <= Self.maxUploadSize else {
            throw ProviderError(.tooLarge, remote: remoteDescription, path: path,
                                detail: "the Favart API takes files of at most 25 MiB (\(Self.maxUploadSize) bytes); this one is \(source.length) bytes")
        }
        try await checkPrecondition(precondition, id, parent: parent)

        let request = CurlRequest(method: "POST", url: urls.file(id),
                                  headers: [CurlHeader("Content-Type", FavartNames.contentType(id.name))])
        let response: CurlResponse
        do {
            response = try await transport.upload(request, from: source.fd, length: source.length)
        } catch {
            throw errors.transport(error, request: "POST /file", path: path)
        }
        pins.forget(path: path)
        guard (200..<300).contains(response.status) else {
            // The real server answers 400 for an upload into a folder that does not exist.
            if response.status == 400, let grandparent = parent.parent, await isMissing(parent, in: grandparent) {
                throw ProviderError(.notFound, remote: remoteDescription, path: path, status: 400,
                                    detail: "POST /file: the folder \(parent.rawValue) is not on the server any more")
            }
            throw errors.status(response.status, request: "POST /file", path: path, body: response.body)
        }
        // Exactly what a listing will say: the size sent, its version, no mtime.
        return FavartListing.item(FavartEntry(name: id.name, size: source.length), in: parent)
    }

    /// Compares the parent's listing with what the upload may replace.
    private func checkPrecondition(_ precondition: UploadPrecondition, _ id: ItemIdentifier, parent: ItemIdentifier) async throws {
        let path = id.rawValue
        switch precondition {
        case .none:
            return
        case .mustNotExist:
            if let existing = try await entry(id, in: parent) {
                throw ProviderError(.exists, remote: remoteDescription, path: path, status: 200,
                                    detail: "POST /file refused: '\(existing.name)' is already there (GET /media)")
            }
        case .mustMatch(let base):
            let current: FavartEntry?
            do {
                current = try await entry(id, in: parent)
            } catch let error as ProviderError where error.kind == .notFound {
                current = nil  // the folder went away with the file
            }
            guard let current else {
                throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: 200,
                                    detail: "POST /file refused: the file is no longer there; its base version was \(base)")
            }
            let now = FavartListing.item(current, in: parent)
            guard now.kind == .file, now.version == base else {
                throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: 200,
                                    detail: "POST /file refused: the file changed on the server (version \(now.version ?? "none"), base version \(base))")
            }
        }
    }

    // MARK: folders

    /// `POST /media` with the form `path=DIR`. The API's mkdir is `mkdir -p` and succeeds on an
    /// existing folder, so the parent's listing is checked first: a missing parent is
    /// `.notFound` (not created on the way) and an existing name `.exists`.
    public func createFolder(_ id: ItemIdentifier) async throws -> Item {
        let path = id.rawValue
        guard let parent = id.parent else {
            throw ProviderError(.exists, remote: remoteDescription, path: path, detail: "the root exists")
        }
        if let problem = storageProblem(id, kind: .folder) { throw problem }
        if try await entry(id, in: parent) != nil {
            throw ProviderError(.exists, remote: remoteDescription, path: path, status: 200,
                                detail: "POST /media refused: '\(id.name)' is already there (GET /media)")
        }
        let request = CurlRequest(method: "POST", url: urls.mediaEndpoint,
                                  headers: [CurlHeader("Content-Type", "application/x-www-form-urlencoded")],
                                  body: urls.mediaForm(id))
        let response: CurlResponse
        do {
            response = try await transport.perform(request)
        } catch {
            throw errors.transport(error, request: "POST /media", path: path)
        }
        guard (200..<300).contains(response.status) else {
            throw errors.status(response.status, request: "POST /media", path: path, body: response.body)
        }
        return Item(identifier: id, kind: .folder)
    }

    // MARK: delete

    /// `DELETE /media?path=PATH`. The API deletes a folder with everything in it, which a
    /// filesystem must not: a folder is listed first and refused with `.notEmpty` unless its
    /// listing is empty. Files the API does not list (not images) are invisible here, so a
    /// folder holding only those looks empty and goes with them; and an entry added between
    /// the listing and the DELETE (one round trip) goes too.
    public func delete(_ item: Item) async throws {
        let path = item.identifier.rawValue
        guard !item.identifier.isRoot else {
            throw ProviderError(.notSupported, remote: remoteDescription, path: path, detail: "the root cannot be deleted")
        }
        if item.isFolder {
            let children = try await list(item.identifier)
            if !children.isEmpty {
                throw ProviderError(.notEmpty, remote: remoteDescription, path: path, status: 200,
                                    detail: "DELETE /media not sent: the folder holds \(children.count) item(s) (GET /media), and the API would delete them all")
            }
        }
        let request = CurlRequest(method: "DELETE", url: urls.mediaItem(item.identifier))
        let response: CurlResponse
        do {
            response = try await transport.perform(request)
        } catch {
            throw errors.transport(error, request: "DELETE /media", path: path)
        }
        pins.forget(path: path)
        guard (200..<300).contains(response.status) else {
            throw errors.status(response.status, request: "DELETE /media", path: path, body: response.body)
        }
    }

    // MARK: move

    /// The API has no move or rename.
    public func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        throw ProviderError(.notSupported, remote: remoteDescription, path: item.identifier.rawValue,
                            detail: "the Favart API has no move or rename (to \(destination.rawValue))")
    }
}
