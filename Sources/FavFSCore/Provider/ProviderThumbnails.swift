import Foundation

/// A provider whose remote makes preview images of its files (Favart's `GET /preview`).
///
/// Optional: a provider that conforms also declares `.thumbnails` in its capabilities. Previews
/// cost the network; `ThumbnailStore` keeps them on disk, keyed by the item's path and version.
public protocol ThumbnailProvider: Provider {
    /// The remote's preview of `item` (a file), as the remote encodes it (Favart: a JPEG 120 px
    /// wide). Throws `ProviderError` like any provider call: `.notFound` when the file is gone,
    /// `.serverError` when the remote cannot make one (e.g. the bytes are not an image).
    func thumbnail(for item: Item) async throws -> Data
}
