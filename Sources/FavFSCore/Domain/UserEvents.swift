import Foundation

/// Something that happened in the mount that the user must know about, even with no terminal
/// open: the desktop notifier subscribes (`favfs mount` turns these into freedesktop
/// notifications). Each is published once, when it happens, never while `Domain.lock` is held.
public enum UserEvent: Sendable, Equatable {
    /// The remote changed under a local edit: the remote version keeps the name, the local one
    /// was saved as `copy`.
    case conflictCopy(original: ItemIdentifier, copy: ItemIdentifier)
    /// The server refused the upload for good (`reason`, its answer); the file stays in the
    /// mount as written, with a copy at `keptAt` (in lost+found) when one could be made.
    case uploadRefused(ItemIdentifier, reason: String, keptAt: String?)
    /// The remote stopped answering (the error, in words).
    case remoteOffline(String)
    /// The remote answers again after `remoteOffline`.
    case remoteOnline
}

/// Whether the remote answers, as the outcomes of requests say: offline after one fails with a
/// network error (it could not be reached, or did not answer in time), online again at the next
/// success. A transition is reported once (not once per failure), and only by a request that
/// started after the last transition: a listing that started while the remote was down and
/// fails after it came back (or succeeds, among slower ones that fail) says nothing new.
public final class ReachabilityTracker: Sendable {
    private let state = Guarded("ReachabilityTracker", State())

    private struct State {
        var offline = false
        /// When the state last changed (monotonic seconds).
        var changedAt: Double = 0
        /// The last error that said the remote could not be reached, with when.
        var lastError: String?
    }

    public init() {}

    /// Monotonic seconds, for `startedAt`.
    public static var clock: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    public var isOffline: Bool { state.withLock { $0.offline } }

    /// The last error that said the remote could not be reached, with when (for status).
    public var lastNetworkError: String? { state.withLock { $0.lastError } }

    private func note(_ error: ProviderError) {
        guard error.isTransient else { return }
        let text = "\(Date()): \(error)"
        state.withLock { $0.lastError = text }
    }

    /// A request that started at `startedAt` failed with `error`. Returns the event to publish
    /// (only when this takes the remote offline).
    public func failed(_ error: ProviderError, startedAt: Double) -> UserEvent? {
        note(error)
        guard Self.meansUnreachable(error) else { return nil }
        return state.withLock { s in
            guard !s.offline, startedAt >= s.changedAt else { return nil }
            s.offline = true
            s.changedAt = Self.clock
            return .remoteOffline(error.detail.isEmpty ? "\(error.kind)" : error.detail)
        }
    }

    /// A request that started at `startedAt` got an answer. Returns the event to publish (only
    /// when this brings the remote back).
    public func succeeded(startedAt: Double) -> UserEvent? {
        state.withLock { s in
            guard s.offline, startedAt >= s.changedAt else { return nil }
            s.offline = false
            s.changedAt = Self.clock
            return .remoteOnline
        }
    }

    /// Offline without an event: the mount started with the remote unreachable (the mount
    /// command said so); its coming back is reported.
    public func startOffline(_ error: ProviderError? = nil) {
        if let error { note(error) }
        state.withLock { s in s.offline = true; s.changedAt = Self.clock }
    }

    /// The errors that say the remote cannot be reached (not a server that answers with an error).
    static func meansUnreachable(_ e: ProviderError) -> Bool {
        e.kind == .unreachable || e.kind == .timedOut
    }
}
