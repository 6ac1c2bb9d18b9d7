import Foundation

/// Who is told of the body bytes a transfer moves (read for an upload, written to a file for a
/// download), for progress reports. The layer above installs one lookup; each transfer asks it
/// once, when it is created, in the task that creates it, so a task-local value of that layer
/// (the transfer the caller is counting) reaches the transfer thread without passing through
/// every provider. Callbacks run on the transfer thread: they must be quick and never block.
public enum CurlByteCounting {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var lookup: (@Sendable () -> (@Sendable (Int64) -> Void)?)?

    /// Installs the lookup (once per process; a later call replaces it).
    public static func install(_ lookup: @escaping @Sendable () -> (@Sendable (Int64) -> Void)?) {
        lock.withLock { Self.lookup = lookup }
    }

    /// The counter for a transfer created now, or nil.
    static func current() -> (@Sendable (Int64) -> Void)? {
        lock.withLock { lookup }?()
    }
}
