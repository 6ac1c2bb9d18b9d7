import Foundation

/// What `connect` found.
public enum Reachability: Sendable {
    case online
    /// The remote did not answer but placeholders are there to browse.
    case offline(ProviderError)
}
