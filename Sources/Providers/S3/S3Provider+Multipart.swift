import Curl
import FavFSCore
import Foundation

/// Multipart uploads for files above `multipartThreshold`: initiate, upload the parts (each
/// streamed from the content fd at its own offset, `partConcurrency` at a time), complete;
/// abort on any failure so no invisible parts are left billed.
///
/// Preconditions: S3 checks `If-None-Match: *` and `If-Match` on CompleteMultipartUpload, which
/// we send; moto checks only `If-None-Match` there. So the precondition is also checked with a
/// HEAD before initiating (no gigabytes uploaded for nothing) and right before completing. With
/// a server that ignores the header at completion, a write by someone else between that last
/// HEAD and the completion (one round trip) is overwritten.
extension S3Provider {
    func multipartUpload(_ id: ItemIdentifier, from source: ContentSource, precondition: UploadPrecondition) async throws -> Item {
        let path = id.rawValue
        let key = addressing.fileKey(id)
        try await checkPrecondition(id, precondition, method: "PUT (multipart)")
        let uploadId = try await initiateMultipart(key: key, path: path)
        do {
            let etags = try await uploadParts(key: key, uploadId: uploadId, source: source, path: path)
            try await checkPrecondition(id, precondition, method: "PUT (multipart)")
            let etag = try await complete(key: key, uploadId: uploadId, etags: etags, precondition: precondition, path: path)
            let uploaded = Item(identifier: id, kind: .file, size: source.length,
                                modified: Date().timeIntervalSince1970.rounded(.down), version: etag)
            // The ETag of a multipart object ("…-N") is the completion's; HEAD gives the mtime.
            return await itemAfterChange(id, fallback: uploaded, method: "POST (complete multipart)")
        } catch {
            await abort(key: key, uploadId: uploadId, path: path)
            throw error
        }
    }

    /// CreateMultipartUpload; returns the upload's id.
    func initiateMultipart(key: String, path: String) async throws -> String {
        let initiated = try await perform(request("POST", url: addressing.objectURL(key, query: [("uploads", "")]), body: Data()),
                                          method: "POST (initiate multipart)", path: path)
        guard initiated.status == 200 else {
            throw errors.status(initiated.status, method: "POST (initiate multipart)", path: path, body: initiated.body)
        }
        guard let uploadId = S3XML.parseFlat(initiated.body)?.fields["UploadId"], !uploadId.isEmpty else {
            throw errors.invalid("InitiateMultipartUploadResult without UploadId", method: "POST (initiate multipart)",
                                 path: path, status: initiated.status)
        }
        return uploadId
    }

    /// The part boundaries: `partSize` bytes each, the last one shorter.
    static func parts(length: Int64, partSize: Int64) -> [(number: Int, offset: Int64, length: Int64)] {
        var parts: [(Int, Int64, Int64)] = []
        var offset: Int64 = 0
        while offset < length {
            let n = min(partSize, length - offset)
            parts.append((parts.count + 1, offset, n))
            offset += n
        }
        return parts
    }

    /// Uploads every part; returns their ETags in part order.
    private func uploadParts(key: String, uploadId: String, source: ContentSource, path: String) async throws -> [String] {
        let parts = Self.parts(length: source.length, partSize: configuration.partSize)
        var etags = [String?](repeating: nil, count: parts.count)
        let width = max(1, configuration.partConcurrency)
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            var next = 0
            func add() {
                let part = parts[next]; next += 1
                group.addTask {
                    let etag = try await self.uploadPart(key: key, uploadId: uploadId, number: part.number, fd: source.fd,
                                                         offset: part.offset, length: part.length, path: path)
                    return (part.number, etag)
                }
            }
            while next < parts.count && next < width { add() }
            while let (number, etag) = try await group.next() {
                etags[number - 1] = etag
                if next < parts.count { add() }
            }
        }
        return etags.map { $0 ?? "" }
    }

    func uploadPart(key: String, uploadId: String, number: Int, fd: Int32, offset: Int64, length: Int64,
                            path: String) async throws -> String {
        let method = "PUT (part \(number))"
        let url = addressing.objectURL(key, query: [("partNumber", String(number)), ("uploadId", uploadId)])
        let response: CurlResponse
        do {
            response = try await transport.upload(request("PUT", url: url, hasBody: true), from: fd, length: length, offset: offset)
        } catch {
            throw errors.transport(error, method: method, path: path)
        }
        guard (200..<300).contains(response.status) else {
            throw errors.status(response.status, method: method, path: path, body: response.body)
        }
        guard let etag = response.headers["etag"] else {
            throw errors.invalid("no ETag for the part", method: method, path: path, status: response.status)
        }
        return etag
    }

    /// CompleteMultipartUpload; returns the object's ETag.
    func complete(key: String, uploadId: String, etags: [String], precondition: UploadPrecondition,
                          path: String) async throws -> String? {
        let method = "POST (complete multipart)"
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for (i, etag) in etags.enumerated() {
            xml += "<Part><PartNumber>\(i + 1)</PartNumber><ETag>\(Self.xmlEscape(etag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        var headers = [CurlHeader("Content-Type", "application/xml")]
        var meaning: [String: ProviderError.Kind] = [:]
        switch precondition {
        case .mustNotExist:
            headers.append(CurlHeader("If-None-Match", "*"))
            meaning = ["412": .exists, "PreconditionFailed": .exists]
        case .mustMatch(let version):
            headers.append(CurlHeader("If-Match", version))
            meaning = ["NoSuchKey": .versionChanged]
        case .none:
            break
        }
        let response = try await perform(request("POST", url: addressing.objectURL(key, query: [("uploadId", uploadId)]),
                                                  headers: headers, body: Data(xml.utf8)), method: method, path: path)
        guard (200..<300).contains(response.status) else {
            throw errors.status(response.status, method: method, path: path, body: response.body, meaning: meaning)
        }
        // S3 may answer 200 and report a failure in the body (it sends 200 early to keep the
        // connection alive during a long completion).
        if let error = errors.embedded(response.body, status: response.status, method: method, path: path, meaning: meaning) {
            throw error
        }
        return S3XML.parseFlat(response.body)?.fields["ETag"] ?? response.headers["etag"]
    }

    /// AbortMultipartUpload, best effort (the upload failed already; its error is what counts).
    func abort(key: String, uploadId: String, path: String) async {
        let url = addressing.objectURL(key, query: [("uploadId", uploadId)])
        // Detached from the caller's cancellation: a cancelled upload must still be aborted.
        let task = Task.detached { [self] in
            try? await self.transport.perform(self.request("DELETE", url: url))
        }
        if let response = await task.value, (200..<300).contains(response.status) { return }
        log.warning("aborting a multipart upload failed; its parts stay until a lifecycle rule removes them", metadata: [
            "remote": "\(remoteDescription)", "path": "\(path)", "uploadId": "\(uploadId)",
        ])
    }

    static func xmlEscape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
