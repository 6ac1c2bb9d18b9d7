import Foundation

extension Domain {
    /// The file holding `id`'s preview: kept from an earlier request (no network), else fetched
    /// from the provider and kept. Remotes without previews answer `.notSupported`.
    public func thumbnailFile(_ id: ItemIdentifier, store: ThumbnailStore) async throws -> URL {
        guard let tp = provider as? any ThumbnailProvider else {
            throw error(.notSupported, id, "this remote has no previews")
        }
        guard let parent = id.parent else { throw error(.isAFolder, id, "the root has no preview") }
        let item = try await lookup(parent, id.name)
        guard item.kind == .file else { throw error(.isAFolder, id, "folders have no preview") }
        _ = try await store.thumbnail(for: item, from: tp)
        return store.fileURL(for: item)
    }
}
