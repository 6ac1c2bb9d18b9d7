import Curl
import FavFSCore
import Foundation
import Logging

/// Dropbox's push of changes for one mount: a cursor on the remote's root folder (recursive),
/// a long poll on it (`files/list_folder/longpoll` on the notify host: no token, held open up to
/// `timeout` seconds plus Dropbox's jitter of up to 90), and, when it says something changed,
/// the entries changed since the cursor (`list_folder/continue`, every page), each reported as
/// the folder whose listing it changes. A change at Dropbox so reaches the mount in seconds
/// instead of at the next poll.
///
/// One task, owned here: `start` makes it, `stop` cancels it (and with it a pending long poll's
/// transfer). Failures are logged and waited out with a bounded exponential back-off.
final class DropboxChangeFeed: @unchecked Sendable {
    /// How long to wait, and how long to back off.
    struct Timing: Sendable {
        /// The long poll's `timeout` (Dropbox takes 30...480).
        var longPollTimeout = 120
        /// The first wait after a failure; it doubles with each failure in a row...
        var firstRetryDelay = 1.0
        /// ...up to this.
        var maxRetryDelay = 300.0
    }

    /// What a long poll said.
    enum LongPollAnswer: Equatable {
        /// `changes`, and the seconds Dropbox asks to wait before the next long poll.
        case answered(changes: Bool, backoff: Double?)
        /// The cursor is no longer valid (`reset`): take a new one; what changed meanwhile is unknown.
        case reset
    }

    private let client: DropboxClient
    private let paths: DropboxPaths
    private let errors: DropboxErrors
    private let timing: Timing
    private let log = Logger(label: "favfs.dropbox.changes")
    private let lock = NSLock()
    // Guarded by `lock`.
    private var task: Task<Void, Never>?
    private var stopped = false
    private var running = false

    /// True once a cursor is held and until a request fails: changes are being reported.
    private var live = false

    /// True while the feed's task runs (tests: `stop` ends it promptly).
    var isRunning: Bool { lock.withLock { running } }
    /// True while changes are being reported (the last request of the feed succeeded).
    var isLive: Bool { lock.withLock { live && running } }

    init(client: DropboxClient, paths: DropboxPaths, errors: DropboxErrors, timing: Timing) {
        self.client = client; self.paths = paths; self.errors = errors; self.timing = timing
    }

    /// Starts the feed (once; never again after `stop`).
    func start(_ onChange: @escaping @Sendable (ItemIdentifier) -> Void) {
        lock.withLock {
            guard task == nil, !stopped else { return }
            running = true
            task = Task.detached(priority: .utility) { [self] in
                await run(onChange)
                log.info("the change feed of \(errors.remote) stopped")
                lock.withLock { running = false }
            }
        }
    }

    /// Cancels the feed's task (a pending long poll's transfer is aborted) and waits for it to
    /// end, at most `seconds`; a task still running then is left behind, and said so.
    func stop(within seconds: Double) async {
        let running: Task<Void, Never>? = lock.withLock {
            stopped = true
            defer { task = nil }
            return task
        }
        guard let running else { return }
        running.cancel()
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline { try? await Task.sleep(nanoseconds: 10_000_000) }
        if isRunning { log.warning("the change feed of \(errors.remote) did not stop within \(Int(seconds)) s; left behind") }
    }

    /// Seconds to wait after `failures` failures in a row.
    static func retryDelay(afterFailures failures: Int, _ timing: Timing) -> Double {
        min(timing.maxRetryDelay, timing.firstRetryDelay * pow(2, Double(max(0, min(failures, 30) - 1))))
    }

    private func run(_ onChange: @escaping @Sendable (ItemIdentifier) -> Void) async {
        var cursor: String?
        var lostTrack = false
        var failures = 0
        // Resets in a row: a new cursor reset at once again is waited out as a failure would be.
        var resets = 0
        while !Task.isCancelled {
            do {
                if let current = cursor {
                    switch try await longPoll(current) {
                    case .reset:
                        resets += 1
                        log.info("Dropbox reset the change cursor of \(errors.remote): taking a new one; the root is listed again")
                        cursor = nil
                        lostTrack = true
                        if resets > 1 { try await Task.sleep(nanoseconds: UInt64(Self.retryDelay(afterFailures: resets - 1, timing) * 1e9)) }
                    case .answered(let changes, let backoff):
                        resets = 0
                        if changes {
                            if let next = try await changedFolders(since: current, report: onChange) {
                                cursor = next
                            } else {
                                cursor = nil
                                lostTrack = true
                            }
                        }
                        if let backoff, backoff > 0 { try await Task.sleep(nanoseconds: UInt64(min(backoff, timing.maxRetryDelay) * 1e9)) }
                    }
                } else {
                    cursor = try await latestCursor()
                    // After a reset, what changed meanwhile is unknown: the root says "look again".
                    if lostTrack { onChange(.rootContainer); lostTrack = false }
                }
                lock.withLock { live = cursor != nil }
                if failures > 0 {
                    log.info("the change feed of \(errors.remote) works again after \(failures) failure(s)")
                    failures = 0
                }
            } catch {
                if Task.isCancelled { break }
                lock.withLock { live = false }
                failures += 1
                let delay = Self.retryDelay(afterFailures: failures, timing)
                log.warning("the change feed of \(errors.remote) failed (\(failures) in a row): \(error); trying again in \(Int(delay)) s (changes arrive by polling meanwhile)")
                try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            }
        }
    }

    // MARK: requests

    /// `files/list_folder/get_latest_cursor` for the remote's root, recursive, deleted entries
    /// included (so that `continue` reports removals).
    func latestCursor() async throws -> String {
        let route = "files/list_folder/get_latest_cursor"
        let response = try await client.rpc(route, ["path": paths.root, "recursive": true, "include_deleted": true], path: "/")
        guard response.status == 200 else { throw errors.status(response, route: route, path: "/") }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let cursor = object["cursor"] as? String, !cursor.isEmpty else {
            throw errors.invalid("no cursor in the answer", request: route, path: "/", status: 200)
        }
        return cursor
    }

    /// One long poll. The request's own bounds are above Dropbox's wait (timeout + up to 90 s
    /// of jitter): no bytes flow meanwhile, so the transport's usual stall limit would end it;
    /// TCP keep-alive notices a peer that vanished.
    func longPoll(_ cursor: String) async throws -> LongPollAnswer {
        let route = "files/list_folder/longpoll"
        let wait = timing.longPollTimeout
        let body = Data(DropboxClient.json(["cursor": cursor, "timeout": wait]).utf8)
        let request = CurlRequest(method: "POST", url: client.endpoints.notify + "/2/" + route,
                                  headers: [CurlHeader("Content-Type", "application/json")], body: body,
                                  options: [.timeout(seconds: Double(wait + 90 + 30)), .lowSpeedTime(seconds: wait + 90 + 30),
                                            .tcpKeepAlive(seconds: 30)])
        let response: CurlResponse
        do {
            response = try await client.transport.perform(request)
        } catch {
            throw errors.transport(error, request: route, path: "/")
        }
        if response.status == 409 && DropboxErrors.tags(response.body).contains("reset") { return .reset }
        if response.status == 429 || response.status == 503 {
            // Throttled: nothing is known of changes; the next long poll waits as Dropbox asks
            // (at least a second, so that an answer without Retry-After cannot make a busy loop).
            let wait = max(1, DropboxErrors.retryAfter(response))
            log.info("Dropbox throttles the change feed of \(errors.remote) (\(response.status)): the next long poll in \(Int(wait)) s")
            return .answered(changes: false, backoff: wait)
        }
        guard response.status == 200 else { throw errors.status(response, route: route, path: "/") }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let changes = object["changes"] as? Bool else {
            throw errors.invalid("not a ListFolderLongpollResult (changes, backoff)", request: route, path: "/", status: 200)
        }
        return .answered(changes: changes, backoff: (object["backoff"] as? NSNumber)?.doubleValue)
    }

    /// Every page of `list_folder/continue` from `cursor`; the folders they change go to
    /// `report` (each once, after the last page). Returns the new cursor, nil on `reset`.
    func changedFolders(since cursor: String, report: (ItemIdentifier) -> Void) async throws -> String? {
        let route = "files/list_folder/continue"
        var cursor = cursor
        var folders = Set<ItemIdentifier>()
        while true {
            let response = try await client.rpc(route, ["cursor": cursor], path: "/")
            if response.status == 409 && DropboxErrors.tags(response.body).contains("reset") { return nil }
            guard response.status == 200 else { throw errors.status(response, route: route, path: "/") }
            guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
                  let entries = object["entries"] as? [[String: Any]], let next = object["cursor"] as? String, !next.isEmpty else {
                throw errors.invalid("not a ListFolderResult (entries, cursor, has_more)", request: route, path: "/", status: 200)
            }
            for entry in entries { folders.formUnion(Self.folders(changedBy: entry, paths: paths)) }
            let more = object["has_more"] as? Bool == true
            // A server that says "more" without moving on would keep this loop going.
            guard !more || next != cursor else {
                throw errors.invalid("has_more with the same cursor", request: route, path: "/", status: 200)
            }
            cursor = next
            if !more { break }
        }
        for folder in folders.sorted() { report(folder) }
        return cursor
    }

    /// The folders whose listing an entry of a change list changes: its parent (a name added,
    /// changed or gone) and, for a folder, the folder itself (it may be new or replaced).
    /// Nothing for an entry outside the remote's root.
    static func folders(changedBy entry: [String: Any], paths: DropboxPaths) -> [ItemIdentifier] {
        guard let path = (entry["path_display"] as? String) ?? (entry["path_lower"] as? String),
              let id = paths.identifier(of: path) else { return [] }
        var out: [ItemIdentifier] = []
        if let parent = id.parent { out.append(parent) }
        if entry[".tag"] as? String == "folder" { out.append(id) }
        return out
    }
}
