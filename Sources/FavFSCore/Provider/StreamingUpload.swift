import Foundation

/// The body of an upload that starts while its file is still being written: a program copying a
/// big file into the mount appends to the cache file, and the remote receives the bytes as they
/// land instead of after the close. The writer side (the domain) says how far the file has
/// grown, and finally that it ended or that the stream must be given up (a write went back over
/// bytes that may have been sent); the transport sends what is there and waits for more.
public final class GrowingContent: @unchecked Sendable {
    /// What the transport may do at a given offset.
    public enum State: Sendable, Equatable {
        /// Bytes up to this offset (exclusive) are in the file.
        case available(upTo: Int64)
        /// The content is complete at this length.
        case ended(length: Int64)
        /// The stream was given up: the transfer must fail (the upload at close follows).
        case abandoned(String)
        /// Nothing more yet: the `wake` passed to `poll` is called once there is.
        case wait
    }

    private let lock = NSLock()
    private var length: Int64
    private var ended = false
    private var abandonReason: String?
    private var waker: (@Sendable () -> Void)?
    /// The length at which a waiting transport is woken: a batch past where it waits, not at
    /// every 128 KiB write (each wake is a round through the transfer thread).
    private var wakeAt: Int64 = 0
    static let wakeBatch: Int64 = 1 << 20

    /// Content whose first `length` bytes are in the file already.
    public init(length: Int64) { self.length = length }

    /// The transport's question: what may be sent from `offset`? `.wait` keeps `wake` to call
    /// once the answer changes (exactly once).
    public func poll(offset: Int64, wake: @escaping @Sendable () -> Void) -> State {
        poll(offset: offset, wakeAt: offset + Self.wakeBatch, wake: wake)
    }

    /// `poll`, waking the waiter once the file holds `wakeAt` bytes (or ends, or is given up).
    private func poll(offset: Int64, wakeAt: Int64, wake: @escaping @Sendable () -> Void) -> State {
        lock.withLock {
            if let abandonReason { return .abandoned(abandonReason) }
            if offset < length { return .available(upTo: length) }
            if ended { return .ended(length: length) }
            waker = wake
            self.wakeAt = wakeAt
            return .wait
        }
    }

    /// Waits until the file holds `target` bytes (`.available`), or the content ended before
    /// (`.ended`, possibly shorter) or was given up (`.abandoned`). For providers that send
    /// fixed pieces (S3 parts) rather than a stream.
    public func bytes(upTo target: Int64) async -> State {
        while true {
            let state: State = await withCheckedContinuation { c in
                // Woken when the part is complete, not a batch past it.
                let now = poll(offset: max(0, target - 1), wakeAt: target) { c.resume(returning: .wait) }
                if now != .wait { c.resume(returning: now) }
            }
            if state != .wait { return state }
        }
    }

    /// Bytes up to `newLength` are in the file now (an append landed).
    func extend(to newLength: Int64) {
        let wake = lock.withLock { () -> (@Sendable () -> Void)? in
            guard !ended, abandonReason == nil, newLength > length else { return nil }
            length = newLength
            return length >= wakeAt ? takeWaker() : nil
        }
        wake?()
    }

    /// The writer is done: the content is complete at `finalLength`. False (and the stream is
    /// given up) when that is not what was appended.
    @discardableResult
    func finish(length finalLength: Int64) -> Bool {
        let (ok, wake) = lock.withLock { () -> (Bool, (@Sendable () -> Void)?) in
            guard abandonReason == nil, !ended else { return (ended, nil) }
            if finalLength != length {
                abandonReason = "the file ended at \(finalLength) bytes, not at the \(length) appended"
            } else {
                ended = true
            }
            return (ended, takeWaker())
        }
        wake?()
        return ok
    }

    /// Gives the stream up (no effect once it ended): the transfer fails at its next read.
    func abandon(_ reason: String) {
        let wake = lock.withLock { () -> (@Sendable () -> Void)? in
            guard !ended, abandonReason == nil else { return nil }
            abandonReason = reason
            return takeWaker()
        }
        wake?()
    }

    /// Bytes appended so far (the whole length once ended).
    public var currentLength: Int64 { lock.withLock { length } }

    private func takeWaker() -> (@Sendable () -> Void)? {
        defer { waker = nil }
        return waker
    }
}

/// A provider that can upload a file while it is still being written (a chunked HTTP PUT fed
/// from the cache file). Only new files are streamed: the remote must not hold the name yet
/// (`If-None-Match: *`), so a stream given up halfway leaves nothing behind and the ordinary
/// upload at close decides about conflicts with the whole content.
public protocol StreamingUploadProvider: WritableProvider {
    /// Bytes a new file must have, written in order, before its upload starts while it is
    /// written; smaller files go whole at their close.
    var streamingThreshold: Int64 { get }

    /// Uploads the bytes of `fd` as a new file at `id`, sending them as `content` says they are
    /// there and ending when it ends. Throws when the stream is abandoned, or as `upload` does.
    func uploadStreaming(_ id: ItemIdentifier, fd: Int32, content: GrowingContent) async throws -> Item
}
