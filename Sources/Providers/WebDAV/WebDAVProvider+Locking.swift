import Curl
import FavFSCore
import Foundation

/// WebDAV write locks (RFC 4918 §9.10) around the replacement of an existing file. Apache
/// checks `If-Match` for each PUT on its own, so two PUTs with the same base version that arrive
/// together both pass and one edit is overwritten without a trace. A LOCK is granted to one
/// client at a time: the version is checked while holding it, and a second client gets
/// `423 Locked`, retries, and then sees the new version (a conflict copy, not a loss).
extension WebDAVProvider {
    /// A granted lock: the token as the server sent it, with its angle brackets
    /// (`<opaquelocktoken:…>`), as `If` and `Lock-Token` want it.
    struct WriteLock {
        let token: String
    }

    /// Takes an exclusive write lock on an existing file. Nil when the server has no locking
    /// (405, 501, or a 2xx without a token): the caller then relies on `If-Match` alone.
    /// Throws `.versionChanged` when the file is gone, `.locked` when another client holds it.
    func lockForWriting(_ id: ItemIdentifier) async throws -> WriteLock? {
        if lockingUnsupported.value { return nil }
        let path = id.rawValue
        let body = Data("""
            <?xml version="1.0" encoding="utf-8"?>
            <D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>favfs</D:owner></D:lockinfo>
            """.utf8)
        // `If-Match: *`: a LOCK of a URL with nothing there would create an empty file (RFC
        // 4918 §7.3), bringing back a file someone deleted.
        let request = CurlRequest(method: "LOCK", url: paths.url(for: id, isFolder: false),
                                  headers: [CurlHeader("Depth", "0"), CurlHeader("Timeout", "Second-\(Self.lockSeconds)"),
                                            CurlHeader("If-Match", "*"), CurlHeader("Content-Type", "application/xml; charset=utf-8")],
                                  body: body, credentials: configuration.credentials)
        let response: CurlResponse
        do {
            response = try await lockRequests.run { try await transport.perform(request) }
        } catch {
            throw errors.transport(error, method: "LOCK", path: path)
        }
        switch response.status {
        case 200..<300:
            guard let token = response.headers["lock-token"], token.hasPrefix("<"), token.hasSuffix(">") else {
                log.notice("the server granted a LOCK without a Lock-Token; writing without locks", metadata: [
                    "remote": "\(remoteDescription)", "path": "\(path)"])
                lockingUnsupported.set()
                return nil
            }
            return WriteLock(token: token)
        case 405, 501:
            log.notice("the server has no WebDAV locks (LOCK: \(response.status)); a PUT is checked with If-Match only", metadata: [
                "remote": "\(remoteDescription)"])
            lockingUnsupported.set()
            return nil
        case 404, 412:
            throw ProviderError(.versionChanged, remote: remoteDescription, path: path, status: response.status,
                                detail: "PUT not sent: the file is no longer there (LOCK: \(response.status) \(WebDAVErrors.reason(response.status)))")
        case 423:
            throw ProviderError(.locked, remote: remoteDescription, path: path, status: 423,
                                detail: "LOCK: 423 Locked: another client is writing the file; the upload is tried again")
        default:
            throw errors.status(response.status, method: "LOCK", path: path, body: response.body)
        }
    }

    /// Releases a lock. A failure is only logged: the lock times out by itself.
    func unlock(_ id: ItemIdentifier, _ lock: WriteLock) async {
        let request = CurlRequest(method: "UNLOCK", url: paths.url(for: id, isFolder: false),
                                  headers: [CurlHeader("Lock-Token", lock.token)], credentials: configuration.credentials)
        let status: String
        do {
            let response = try await lockRequests.run { try await transport.perform(request) }
            if (200..<300).contains(response.status) { return }
            status = "\(response.status) \(WebDAVErrors.reason(response.status))"
        } catch {
            status = "\(error)"
        }
        log.warning("UNLOCK failed; the lock ends by itself after \(Self.lockSeconds) s", metadata: [
            "remote": "\(remoteDescription)", "path": "\(id.rawValue)", "error": "\(status)"])
    }

    /// Long enough for a slow PUT to start (servers check the lock when a request begins), short
    /// enough that a lock the server forgot to release blocks the file only briefly.
    static let lockSeconds = 30
}

/// Runs one operation at a time, in the order they came. Apache's lock database (mod_dav_fs,
/// threaded MPM) can lose an UNLOCK that runs at the same moment as another LOCK or UNLOCK, so
/// that the file stays locked, for everyone, until the lock times out: this mount sends its
/// lock requests one by one. (Other clients' lock requests still meet ours: see `lostLock`.)
actor SerialGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        return try await body()
    }
}

/// Set once the server showed it has no usable locks, so no LOCK is sent again.
final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var isSet = false
    var value: Bool { lock.withLock { isSet } }
    /// True when this call set it (the first to).
    @discardableResult
    func set() -> Bool { lock.withLock { defer { isSet = true }; return !isSet } }
}
