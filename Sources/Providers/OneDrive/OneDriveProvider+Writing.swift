import Curl
import FavFSCore
import Foundation

/// The write side: uploads (one PUT up to `sessionThreshold`, an upload session above),
/// folders, deletes, moves and times. Graph checks preconditions with the write: a replace
/// carries `If-Match` with the version it replaces (412 otherwise: `.versionChanged`, which the
/// core turns into a conflict copy), a new file `conflictBehavior=fail` (409 `nameAlreadyExists`).
extension OneDriveProvider: WritableProvider {
    /// OneDrive's largest file: 250 GB.
    public var maxFileSize: Int64? { 250 * 1_000_000_000 }

    public func storageProblem(_ id: ItemIdentifier, kind: ItemKind) -> ProviderError? {
        if let why = OneDriveNames.problem(id.name) {
            return ProviderError(.invalidName, remote: remoteDescription, path: id.rawValue, detail: why)
        }
        let length = paths.drivePath(id).count
        if length > OneDriveNames.maxPathLength {
            return ProviderError(.nameTooLong, remote: remoteDescription, path: id.rawValue,
                                 detail: "OneDrive stores paths of at most \(OneDriveNames.maxPathLength) characters; this one has \(length)")
        }
        return nil
    }

    // MARK: upload

    public func upload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        let path = id.rawValue
        guard !id.isRoot else { throw ProviderError(.isAFolder, remote: remoteDescription, path: path, detail: "the root is a folder") }
        if let problem = storageProblem(id, kind: .file) { throw problem }
        if let max = maxFileSize, source.length > max {
            throw ProviderError(.tooLarge, remote: remoteDescription, path: path, detail: "OneDrive stores files of at most \(max) bytes; this one is \(source.length)")
        }
        var headers: [CurlHeader] = []
        let behaviour: String
        switch precondition {
        case .mustNotExist: behaviour = "fail"
        case .mustMatch(let version): behaviour = "replace"; headers.append(CurlHeader("If-Match", version))
        case .none: behaviour = "replace"
        }
        let what: String
        let response: CurlResponse
        if source.length > configuration.sessionThreshold {
            what = "upload session"
            response = try await uploadInSession(id, source: source, behaviour: behaviour, headers: headers)
        } else {
            what = "PUT content"
            let url = paths.url(graph, id, "content") + "?@microsoft.graph.conflictBehavior=" + behaviour
            response = try await client.send(what, path: path) { token in
                let request = CurlRequest(method: "PUT", url: url, headers: [CurlHeader("Authorization", "Bearer \(token)"),
                                                                             CurlHeader("Content-Type", "application/octet-stream")] + headers)
                return try await self.client.transport.upload(request, from: source.fd, length: source.length)
            }
        }
        guard response.status == 200 || response.status == 201 else { throw uploadError(response, what: what, path: path) }
        return try item(from: response.body, id: id, request: what)
    }

    /// A refused upload: a version that is no longer the file's says so.
    func uploadError(_ response: CurlResponse, what: String, path: String) -> ProviderError {
        var error = errors.status(response, what: what, path: path)
        if error.kind == .versionChanged {
            error.detail += " — the file is no longer at the version this upload replaces; it changed on OneDrive"
        }
        return error
    }

    /// `createUploadSession` (with `If-Match` and the conflict behaviour, checked when the
    /// session is made and again when it completes), then the fragments in order, each a
    /// multiple of 320 KiB but the last, sent to the session's pre-authenticated URL from where
    /// Graph's `nextExpectedRanges` says. A fragment lost to the network or a 5xx is resumed
    /// from where the session says (at most `maxResumes` times). Returns the answer to the last
    /// fragment (the driveItem), or the first refusal. A failed session is deleted.
    private func uploadInSession(_ id: ItemIdentifier, source: ContentSource, behaviour: String, headers: [CurlHeader]) async throws -> CurlResponse {
        let path = id.rawValue
        let body: [String: Any] = ["item": ["@microsoft.graph.conflictBehavior": behaviour, "name": id.name]]
        let created = try await client.call("POST", paths.url(graph, id, "createUploadSession"), json: body, headers: headers,
                                            what: "POST createUploadSession", path: path)
        guard created.status == 200 else { return created }
        guard let object = try? JSONSerialization.jsonObject(with: created.body) as? [String: Any],
              let uploadURL = object["uploadUrl"] as? String, !uploadURL.isEmpty else {
            throw errors.invalid("no uploadUrl", request: "POST createUploadSession", path: path, status: 200)
        }
        let unit = Self.fragmentUnit
        let fragment = max(unit, configuration.sessionFragmentSize / unit * unit)
        var offset: Int64 = 0
        // Each fragment once, and a few resends where Graph asks for a range again.
        let bound = Int(source.length / fragment) + 8
        var resumes = 0
        do {
            for _ in 0..<bound {
                let length = min(fragment, source.length - offset)
                let range = "bytes \(offset)-\(offset + length - 1)/\(source.length)"
                let response: CurlResponse
                do {
                    response = try await client.sendUnauthenticated("PUT upload session fragment", path: path) {
                        let request = CurlRequest(method: "PUT", url: uploadURL, headers: [CurlHeader("Content-Range", range)])
                        return try await self.client.transport.upload(request, from: source.fd, length: length, offset: offset)
                    }
                } catch let error as ProviderError where [.unreachable, .timedOut, .serverError].contains(error.kind) && resumes < Self.maxResumes {
                    // A fragment lost on the way: ask the session where to go on (Graph's advice).
                    resumes += 1
                    log.info("upload session: a fragment failed; resuming", metadata: ["remote": "\(remoteDescription)", "path": "\(path)", "error": "\(error)"])
                    offset = try await resumePoint(uploadURL, length: source.length, path: path)
                    continue
                }
                switch response.status {
                case 200, 201:
                    return response
                case 202:
                    offset = try nextExpected(response, after: offset + length, length: source.length, path: path)
                case 500..<600 where resumes < Self.maxResumes:
                    resumes += 1
                    log.info("upload session: a fragment was refused; resuming", metadata: [
                        "remote": "\(remoteDescription)", "path": "\(path)", "status": "\(response.status)"])
                    offset = try await resumePoint(uploadURL, length: source.length, path: path)
                default:
                    await cancelSession(uploadURL, path: path)
                    return response
                }
            }
        } catch {
            await cancelSession(uploadURL, path: path)
            throw error
        }
        await cancelSession(uploadURL, path: path)
        throw errors.invalid("the upload session did not complete after \(bound) fragments", request: "upload session", path: path, status: 202)
    }

    /// Where Graph wants the next fragment to start: the first of `nextExpectedRanges`
    /// (`["26214400-"]`), which must be within the file; `sent` when it does not say (-1: it must).
    private func nextExpected(_ response: CurlResponse, after sent: Int64, length: Int64, path: String) throws -> Int64 {
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let ranges = object["nextExpectedRanges"] as? [String], let first = ranges.first,
              let start = Int64(first.split(separator: "-", omittingEmptySubsequences: false).first ?? "") else {
            guard sent >= 0 else {
                throw errors.invalid("the upload session does not say which bytes it expects", request: "GET upload session", path: path, status: response.status)
            }
            return sent
        }
        guard start >= 0, start < length else {
            throw errors.invalid("nextExpectedRanges \(ranges) is outside the file's \(length) bytes", request: "upload session", path: path, status: 202)
        }
        return start
    }

    /// Fragments resent after a failure, at most, per upload.
    static let maxResumes = 3

    /// `GET` of the session: where Graph wants the next fragment.
    private func resumePoint(_ uploadURL: String, length: Int64, path: String) async throws -> Int64 {
        let response = try await client.sendUnauthenticated("GET upload session", path: path) {
            try await self.client.transport.perform(CurlRequest(url: uploadURL))
        }
        guard response.status == 200 else { throw errors.status(response, what: "GET upload session", path: path) }
        return try nextExpected(response, after: -1, length: length, path: path)
    }

    /// Best effort: a session left behind expires by itself.
    private func cancelSession(_ uploadURL: String, path: String) async {
        _ = try? await client.transport.perform(CurlRequest(method: "DELETE", url: uploadURL))
    }

    // MARK: folders, delete, move, times

    /// `POST …/children` with the folder facet; never merged into an existing folder (`fail`).
    public func createFolder(_ id: ItemIdentifier) async throws -> Item {
        let path = id.rawValue
        guard let parent = id.parent else { throw ProviderError(.exists, remote: remoteDescription, path: path, detail: "the root exists") }
        if let problem = storageProblem(id, kind: .folder) { throw problem }
        let body: [String: Any] = ["name": id.name, "folder": [String: Any](), "@microsoft.graph.conflictBehavior": "fail"]
        let response = try await client.call("POST", paths.url(graph, parent, "children"), json: body, what: "POST children", path: path)
        guard response.status == 201 || response.status == 200 else { throw errors.status(response, what: "POST children", path: path) }
        return try item(from: response.body, id: id, request: "POST children")
    }

    /// `DELETE` removes a folder with everything in it, so a folder is listed first and refused
    /// when it has anything (`.notEmpty`); an entry added between the two goes with it.
    public func delete(_ item: Item) async throws {
        let path = item.identifier.rawValue
        guard !item.identifier.isRoot else {
            throw ProviderError(.notSupported, remote: remoteDescription, path: path, detail: "the root cannot be deleted")
        }
        if item.isFolder {
            let response = try await client.call("GET", paths.url(graph, item.identifier, "children") + "?$top=1", what: "GET children", path: path)
            guard response.status == 200 else { throw errors.status(response, what: "GET children", path: path) }
            let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
            if !((object?["value"] as? [Any])?.isEmpty ?? true) {
                throw ProviderError(.notEmpty, remote: remoteDescription, path: path, status: 200,
                                    detail: "DELETE not sent: the folder is not empty, and OneDrive would delete everything in it")
            }
        }
        let response = try await client.call("DELETE", paths.url(graph, item.identifier), what: "DELETE", path: path)
        guard response.status == 204 || response.status == 200 else { throw errors.status(response, what: "DELETE", path: path) }
    }

    /// `PATCH` with the new `name` and, to another folder, its `parentReference` (by id: one
    /// `GET` of the destination folder first). Graph never
    /// moves over an existing item (409 `nameAlreadyExists`); replacing an existing file deletes
    /// it first, so another client may see the name missing for one round trip.
    public func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        let path = item.identifier.rawValue
        if let problem = storageProblem(destination, kind: item.kind) { throw problem }
        guard let parent = destination.parent else {
            throw ProviderError(.exists, remote: remoteDescription, path: destination.rawValue, detail: "cannot move over the root folder")
        }
        var body: [String: Any] = ["name": destination.name]
        if parent != item.identifier.parent { body["parentReference"] = ["id": try await folderID(parent)] }
        let url = paths.url(graph, item.identifier) + "?@microsoft.graph.conflictBehavior=fail"
        var response = try await client.call("PATCH", url, json: body, what: "PATCH (move)", path: path)
        if replacing, response.status == 409, OneDriveErrors.codes(response.body).contains("nameAlreadyExists") {
            let existing = try await self.item(for: destination)
            guard existing.kind == .file else {
                throw ProviderError(.exists, remote: remoteDescription, path: destination.rawValue, detail: "PATCH (move): a folder is in the way")
            }
            try await delete(existing)
            response = try await client.call("PATCH", url, json: body, what: "PATCH (move)", path: path)
        }
        guard response.status == 200 else { throw errors.status(response, what: "PATCH (move)", path: path) }
        return try self.item(from: response.body, id: destination, request: "PATCH (move)")
    }

    /// `PATCH` of `fileSystemInfo.lastModifiedDateTime` (whole seconds, as OneDrive keeps them):
    /// the time listings report from then on, so `rsync -a` finds it again.
    public func setModified(_ id: ItemIdentifier, to time: Timestamp) async throws -> Item {
        let path = id.rawValue
        let body: [String: Any] = ["fileSystemInfo": ["lastModifiedDateTime": OneDriveItems.text(time)]]
        let response = try await client.call("PATCH", paths.url(graph, id), json: body, what: "PATCH fileSystemInfo", path: path)
        guard response.status == 200 else { throw errors.status(response, what: "PATCH fileSystemInfo", path: path) }
        return try item(from: response.body, id: id, request: "PATCH fileSystemInfo")
    }
}
