import Curl
import FavFSCore
import Foundation

/// Moves. S3 has no rename: a file is copied server-side (`x-amz-copy-source`) and the source
/// deleted; a folder is every key below its prefix copied, then deleted. A folder move is NOT
/// atomic: a failure half-way leaves keys at both places (the source is deleted only after every
/// copy succeeded, so nothing is lost), and other clients see the tree appear key by key.
/// Server-side copies are limited to 5 GiB per object (S3's CopyObject limit).
extension S3Provider {
    public func move(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        let id = item.identifier
        guard !id.isRoot, !destination.isRoot else {
            throw ProviderError(.invalidName, remote: remoteDescription, path: id.rawValue, detail: "the root cannot be moved or replaced")
        }
        if id == destination { return item }
        return item.isFolder
            ? try await moveFolder(id, to: destination, replacing: replacing)
            : try await moveFile(item, to: destination, replacing: replacing)
    }

    private func moveFile(_ item: Item, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        let id = item.identifier
        // What is at the destination decides first: a folder is never replaced by a file, and
        // without `replacing` nothing is.
        if try await folderExists(destination) {
            throw ProviderError(replacing ? .isAFolder : .exists, remote: remoteDescription, path: destination.rawValue,
                                detail: "MOVE refused: a folder is at the destination")
        }
        if !replacing {
            // Checked here and again by the server (If-None-Match: * on the copy, where it is honoured).
            try await checkPrecondition(destination, .mustNotExist, method: "MOVE")
        }
        let copied = try await copyKey(addressing.fileKey(id), to: addressing.fileKey(destination),
                                       mustNotExist: !replacing, path: id.rawValue)
        try await deleteKey(addressing.fileKey(id), path: id.rawValue)
        let fallback = Item(identifier: destination, kind: .file, size: item.size, modified: copied.modified, version: copied.etag)
        return await itemAfterChange(destination, fallback: fallback, method: "PUT (copy)")
    }

    private func moveFolder(_ id: ItemIdentifier, to destination: ItemIdentifier, replacing: Bool) async throws -> Item {
        let source = addressing.folderPrefix(id)
        let target = addressing.folderPrefix(destination)
        if target.hasPrefix(source) {
            throw ProviderError(.invalidName, remote: remoteDescription, path: id.rawValue,
                                detail: "MOVE refused: the destination \(destination.rawValue) is inside the folder")
        }
        if try await head(destination) != nil {
            throw ProviderError(replacing ? .notAFolder : .exists, remote: remoteDescription, path: destination.rawValue,
                                detail: "MOVE refused: a file is at the destination")
        }
        let existing = try await list(prefix: target, delimiter: nil, maxKeys: 2, token: nil, path: destination.rawValue)
        if !existing.objects.isEmpty {
            if !replacing {
                throw ProviderError(.exists, remote: remoteDescription, path: destination.rawValue, detail: "MOVE refused: the folder exists")
            }
            if existing.objects.contains(where: { $0.key != target }) {
                throw ProviderError(.notEmpty, remote: remoteDescription, path: destination.rawValue,
                                    detail: "MOVE refused: the destination folder is not empty")
            }
        }
        // Every key below the source, all pages.
        var keys: [String] = []
        var token: String?
        repeat {
            let page = try await list(prefix: source, delimiter: nil, maxKeys: 1000, token: token, path: id.rawValue)
            keys += page.objects.map(\.key)
            token = page.isTruncated ? page.nextContinuationToken : nil
        } while token != nil
        if keys.isEmpty {
            throw ProviderError(.notFound, remote: remoteDescription, path: id.rawValue, detail: "no key below \(source)")
        }
        // Copy all first, delete after: a failure leaves a partial copy but loses nothing.
        try await forEach(keys) { key in
            _ = try await self.copyKey(key, to: target + key.dropFirst(source.count), mustNotExist: false, path: id.rawValue)
        }
        try await forEach(keys) { key in try await self.deleteKey(key, path: id.rawValue) }
        return Item(identifier: destination, kind: .folder)
    }

    /// Runs `body` for every element, `partConcurrency` at a time; the first error is thrown.
    private func forEach(_ elements: [String], _ body: @escaping @Sendable (String) async throws -> Void) async throws {
        let width = max(1, configuration.partConcurrency)
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            while next < elements.count && next < width {
                let e = elements[next]; next += 1
                group.addTask { try await body(e) }
            }
            while try await group.next() != nil {
                if next < elements.count {
                    let e = elements[next]; next += 1
                    group.addTask { try await body(e) }
                }
            }
        }
    }

    /// CopyObject (`PUT` with `x-amz-copy-source`). Returns the new object's ETag and mtime.
    func copyKey(_ key: String, to destination: String, mustNotExist: Bool, path: String) async throws -> (etag: String?, modified: Double?) {
        var headers = [CurlHeader("x-amz-copy-source", addressing.copySource(key))]
        if mustNotExist { headers.append(CurlHeader("If-None-Match", "*")) }
        let response = try await perform(request("PUT", url: addressing.objectURL(destination), headers: headers, body: Data()),
                                         method: "PUT (copy)", path: path)
        let meaning: [String: ProviderError.Kind] = mustNotExist ? ["412": .exists, "PreconditionFailed": .exists] : [:]
        guard (200..<300).contains(response.status) else {
            throw errors.status(response.status, method: "PUT (copy)", path: path, body: response.body, meaning: meaning)
        }
        // A copy can fail after S3 sent 200: the body is then an <Error>.
        if let error = errors.embedded(response.body, status: response.status, method: "PUT (copy)", path: path, meaning: meaning) {
            throw error
        }
        let result = S3XML.parseFlat(response.body)?.fields
        return (result?["ETag"], result?["LastModified"].flatMap(S3Time.parseISO8601))
    }
}
