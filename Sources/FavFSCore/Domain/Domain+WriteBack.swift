import Foundation

/// Write-back as the bridge and the CLI see it (the work is `WriteBack`'s): `Domain` is its
/// host, the namespace its uploads update.
extension Domain {
    /// Uploads every item the journal lists (after a crash or kill, at mount).
    public func resumeUploads() { writeBack.resumeUploads(host: writing) }

    /// Waits until the remote confirmed `id`'s content as it is now (changes made after this call
    /// are not waited for: fsync), or, `untilClean`, until no upload of it is left at all (before
    /// a rename or delete). Returns at once for an item that was dropped. Throws the upload's
    /// permanent failure. Call after the upload was scheduled (or a close that schedules it).
    public func waitForUpload(_ id: ItemIdentifier, untilClean: Bool = false) async throws {
        try await writeBack.waitForUpload(id, untilClean: untilClean)
    }

    /// Uploads still pending: how many items and bytes, and those that failed (tried again at
    /// the next change, fsync or mount). Content the server refused is not pending: see
    /// `refusedUploads`.
    public func pendingUploads() -> (items: Int, bytes: Int64, failed: [ProviderError]) {
        writeBack.pendingUploads(host: writing)
    }

    /// Files the server refused for good (too large, denied...): kept in the mount and in
    /// lost+found until changed or removed.
    public func refusedUploads() -> [ProviderError] { writeBack.refusedUploads() }

    /// Starts every pending upload and waits until none is left or only failed ones remain
    /// (unmount). `progress` is called about every half second.
    public func drainUploads(progress: @Sendable (Int, Int64) -> Void) async -> [ProviderError] {
        await writeBack.drainUploads(progress: progress, host: writing)
    }

    /// The conflict copy's name for `name` (exposed for tests).
    public static func conflictNameForTests(_ name: String, date: Date) -> String {
        ConflictCopies.conflictName(name, date: date, attempt: 0)
    }
}
