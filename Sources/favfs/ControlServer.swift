import Foundation
import FavFSCore

/// The daemon's side of the control channel (see `ControlChannel`):
/// - `prepare-unmount keep-cache=0|1`: finishes pending uploads (reporting `progress` lines),
///   remembers whether to keep the cache, answers `ready`, and after the kernel unmount
///   `evicted FILES BYTES`;
/// - `status` and `status PATH`: the mount's or an item's state, as lines, then `end`;
/// - `thumbnail PATH`: `file FILE` (the kept preview) or `error: …`, then `end`;
/// - `pin PATH`, `unpin PATH`: `ok` or `error: …`, then `end`;
/// - `evict PATH` (free up space): see `evict(_:)`, then `end`.
final class ControlServer: @unchecked Sendable {
    private let domain: Domain
    private let remote: String
    private let name: String?
    private let mountpoint: String
    private let thumbnails: ThumbnailStore?
    private let lock = NSLock()
    private var keep = false
    private var waiting: LineSocket?
    /// Called before `ready` and after `cancel`: the mount's own work on its mount point stops
    /// and starts again (see `FUSEMount.prepareForUnmount`).
    private let beforeUnmount: @Sendable () -> Void
    private let unmountCancelled: @Sendable () -> Void

    init(domain: Domain, remote: String, name: String? = nil, mountpoint: String, thumbnails: ThumbnailStore? = nil,
         beforeUnmount: @escaping @Sendable () -> Void = {}, unmountCancelled: @escaping @Sendable () -> Void = {}) {
        self.domain = domain; self.remote = remote; self.name = name; self.mountpoint = mountpoint
        self.thumbnails = thumbnails
        self.beforeUnmount = beforeUnmount; self.unmountCancelled = unmountCancelled
    }

    var keepCache: Bool { lock.withLock { keep } }

    func serve(_ s: LineSocket) {
        while let line = s.readLine() {
            if line.hasPrefix("prepare-unmount") {
                lock.withLock { keep = line.contains("keep-cache=1"); waiting = s }
                let failures = drainUploads(reportingTo: s)
                for f in failures {
                    s.send("warning: not uploaded, kept in the cache for the next mount: \(f)")
                }
                // Not waited for (the server said no), but not on the server either: said here too.
                for f in domain.refusedUploads() {
                    s.send("warning: refused by the server, kept in the cache and in lost+found until changed or removed: \(f)")
                }
                beforeUnmount()
                s.send("ready")
            } else if line == "status" {
                for l in mountStatus() { s.send(l) }
                s.send("end")
            } else if line == "status-json" {
                s.send(JSONOutput.encode(mountReport(), pretty: false))
                s.send("end")
            } else if line.hasPrefix("status /") {
                let id = ItemIdentifier(String(line.dropFirst("status ".count)))
                s.send(domain.state(of: id) ?? "unknown (not seen by this mount)")
                s.send("end")
            } else if line.hasPrefix("pin /") || line.hasPrefix("unpin /") {
                let pin = line.hasPrefix("pin /")
                s.send(setPinned(ItemIdentifier(String(line.drop { $0 != "/" })), pin))
                s.send("end")
            } else if line.hasPrefix("evict /") {
                for l in evict(ItemIdentifier(String(line.dropFirst("evict ".count)))) { s.send(l) }
                s.send("end")
            } else if line.hasPrefix("thumbnail /") {
                s.send(thumbnail(ItemIdentifier(String(line.dropFirst("thumbnail ".count)))))
                s.send("end")
            } else if line == "cancel" {
                lock.withLock { keep = false; waiting = nil }
                unmountCancelled()
            } else {
                s.send("error: unknown command")
            }
        }
    }

    /// `pin PATH` / `unpin PATH`: "ok" or "error: …". Blocks this (control) thread while the
    /// item is looked up.
    private func setPinned(_ id: ItemIdentifier, _ pinned: Bool) -> String {
        let done = DispatchSemaphore(value: 0)
        let answer = AnswerBox()
        let domain = self.domain
        Task {
            do { try await domain.setPinned(id, pinned); answer.line = "ok" } catch { answer.line = "error: \(error)" }
            done.signal()
        }
        done.wait()
        return answer.line
    }

    /// `evict PATH` (free up space): `unpinned PATH` and `kept PATH: why` lines, then
    /// `freed FILES BYTES`, or `error: …`. Blocks this (control) thread meanwhile.
    private func evict(_ id: ItemIdentifier) -> [String] {
        let done = DispatchSemaphore(value: 0)
        let answer = AnswerBox()
        let domain = self.domain
        Task {
            do {
                let r = try await domain.evict(id)
                answer.lines = r.unpinned.map { "unpinned \($0.rawValue)" } + r.kept.map { "kept \($0.id.rawValue): \($0.reason)" }
                    + ["freed \(r.files) \(r.bytes)"]
            } catch { answer.lines = ["error: \(error)"] }
            done.signal()
        }
        done.wait()
        return answer.lines
    }

    /// Blocks this (control) thread while the preview is found or fetched.
    private func thumbnail(_ id: ItemIdentifier) -> String {
        guard let store = thumbnails else { return "error: previews are not kept by this mount" }
        let done = DispatchSemaphore(value: 0)
        let answer = AnswerBox()
        let domain = self.domain
        Task {
            do { answer.line = "file " + (try await domain.thumbnailFile(id, store: store)).path }
            catch { answer.line = "error: \(error)" }
            done.signal()
        }
        done.wait()
        return answer.line
    }

    /// What a task answers the waiting control thread (written before `done.signal()`).
    final class AnswerBox: @unchecked Sendable { var line = ""; var lines: [String] = [] }

    /// Blocks this (control) thread until uploads are done or only failed ones remain.
    private func drainUploads(reportingTo s: LineSocket) -> [ProviderError] {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox()
        let domain = self.domain
        Task {
            result.failures = await domain.drainUploads { items, bytes in
                s.send("progress \(items) \(bytes)")
            }
            done.signal()
        }
        done.wait()
        return result.failures
    }

    private func mountStatus() -> [String] {
        let s = domain.status()
        var lines = ["remote: \(remote)"] + (name.map { ["name: \($0)"] } ?? []) + ["mountpoint: \(mountpoint)",
                     "access: \(domain.isWritable ? "read-write" : "read-only")",
                     "cache: \(Plural.count(Int(s.cachedFiles), "file")), \(ByteSize.format(s.cachedBytes)) of \(ByteSize.format(s.cacheLimit)) (\(domain.content.directory.deletingLastPathComponent().path))",
                     "uploads: \(s.pendingUploads) pending (\(ByteSize.format(s.pendingBytes)))"]
        for f in s.failedUploads { lines.append("failed upload: \(f)") }
        for f in s.refusedUploads { lines.append("refused upload (kept in the mount and in lost+found until changed or removed): \(f)") }
        let lost = domain.content.lostAndFound.directory
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: lost.path)) ?? []
        if !kept.isEmpty { lines.append("lost+found: \(Plural.count(kept.count, "file")) not on the server (refused uploads, content the database lost), kept in \(lost.path)") }
        if let e = s.lastNetworkError { lines.append("last network error: \(e)") }
        for t in transfers() { lines.append("transfer: \(t.line)") }
        lines += MountStatusReport.Pins(domain.pinStatus(), mountpoint: mountpoint).lines
        return lines
    }

    /// Uploads and downloads running now, with paths on this machine.
    private func transfers() -> [MountStatusReport.Transfer] {
        domain.transfers().map { t in
            MountStatusReport.Transfer(
                path: (mountpoint == "/" ? "" : mountpoint) + t.id.rawValue, direction: t.direction.rawValue,
                bytesDone: t.bytesDone, bytesTotal: t.bytesTotal, rateBytesPerSecond: Int64(t.rateBytesPerSecond),
                etaSeconds: t.etaSeconds.map { Int64($0.rounded(.up)) })
        }
    }

    private func mountReport() -> MountStatusReport {
        let s = domain.status()
        let lost = domain.content.lostAndFound.directory
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: lost.path)) ?? []
        return MountStatusReport(
            mountpoint: mountpoint, remote: remote, name: name, answering: true, readOnly: !domain.isWritable,
            cache: .init(files: s.cachedFiles, bytes: s.cachedBytes, limitBytes: s.cacheLimit,
                         directory: domain.content.directory.deletingLastPathComponent().path),
            uploads: .init(pending: s.pendingUploads, pendingBytes: s.pendingBytes, failed: s.failedUploads.map { "\($0)" },
                             refused: s.refusedUploads.map { "\($0)" }),
            lostAndFound: .init(files: kept.count, directory: lost.path),
            lastNetworkError: s.lastNetworkError, transfers: transfers(),
            pins: MountStatusReport.Pins(domain.pinStatus(), mountpoint: mountpoint))
    }

    final class ResultBox: @unchecked Sendable { var failures: [ProviderError] = [] }

    func finish(_ line: String) {
        lock.withLock {
            waiting?.send(line)
            waiting?.close()
            waiting = nil
        }
    }
}

