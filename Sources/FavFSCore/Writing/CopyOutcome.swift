import Foundation

/// What `copyRange` did.
public enum CopyOutcome: Sendable, Equatable {
    /// The remote made the copy (or there was nothing to copy): this many bytes.
    case copied(Int64)
    /// Not a case for a server-side copy; the caller copies through reads and writes.
    case fallBack(String)
}
