import Foundation
import Logging

/// Server-side copy: `copy_file_range` (what `cp` calls) of a whole file into a file just
/// created here becomes one remote operation (`ServerSideCopyProvider`) instead of a download
/// and an upload. Anything else is copied by the kernel through reads and writes.
///
/// Server-side copies (`copyRange`): the copy's commit is recorded as an upload's is, in
/// three steps (claimed, the store written without `Domain.lock`, then memory).
final class ServerSideCopy: Sendable {
    let provider: any Provider
    let content: ContentCache
    let placeholders: Placeholders
    let handles: HandleTable
    /// The destination handle's writes, and the host of the upload a copy that did not happen leaves.
    let writing: Writing
    let log = Logger(label: "favfs.domain")

    init(provider: any Provider, content: ContentCache, placeholders: Placeholders, handles: HandleTable, writing: Writing) {
        self.provider = provider
        self.content = content
        self.placeholders = placeholders
        self.handles = handles
        self.writing = writing
    }

    var lock: Guarded<DomainState> { placeholders.lock }
    var store: PlaceholderStore { placeholders.store }

    /// The most one answer can report: FUSE's reply to a copy counts bytes in 32 bits. A larger
    /// copy is made at once and reported over several requests (the kernel asks for the rest).
    static let maxCopyReply: Int64 = 0xFFFF_F000

    /// Copies `length` bytes at `offsetIn` of the file open as `sourceHandle` to `offsetOut` of
    /// the file open as `destinationHandle`, at the remote, when that is exactly a whole-file
    /// copy: the whole source (from 0, `length` at least its size), not dirty (a dirty source
    /// has bytes the remote does not), into a file created here and still empty (its journal
    /// says new, no upload begun), at 0. The destination's pending (empty) upload is dropped
    /// with the copy's commit, so its close uploads nothing; its placeholder becomes the
    /// remote's copy, whose content is fetched on demand like any placeholder's. More written
    /// through the destination handle after the copy first needs the copy's content here
    /// (`needsContentBeforeWriting`, `prepareForWriting`).
    func copyRange(from sourceHandle: UInt64, offset offsetIn: Int64, to destinationHandle: UInt64,
                          offset offsetOut: Int64, length: Int64) async throws -> CopyOutcome {
        let src = try writing.reading.file( sourceHandle)
        let dst = try writing.reading.file( destinationHandle)
        let (sourceId, sourceSize, sourceGone) = src.entry.withLock { es in (es.id, es.size, es.deleted || es.stale) }
        // Past the end there is nothing to copy, whatever the case (cp asks once more at the end).
        if offsetIn >= sourceSize && !sourceGone { return .copied(0) }
        guard let copier = provider as? any ServerSideCopyProvider, provider.capabilities.contains(.serverSideCopy), writing.isWritable else {
            return .fallBack("\(provider.remoteDescription) has no server-side copy")
        }
        // The rest of a copy made at the remote already: one FUSE answer counts at most 4 GiB,
        // so the kernel asks again for what follows.
        if let from = dst.copiedFrom, from == sourceId, offsetIn == offsetOut, offsetIn < dst.item.size {
            return .copied(min(dst.item.size - offsetIn, length, Self.maxCopyReply))
        }
        // Anything else into a file made by a copy (`cat a b > c`: b goes after a): the copy's
        // content comes here first, so the kernel's writes of this range have a whole file to
        // land in and be uploaded with.
        if dst.copiedFrom != nil {
            try await writing.prepareForWriting(handle: destinationHandle)
            return .fallBack("more into a file made by a server-side copy")
        }
        guard offsetIn == 0, offsetOut == 0 else { return .fallBack("a partial range (from \(offsetIn) to \(offsetOut))") }
        guard dst.writable else { return .fallBack("the destination is not open for writing") }
        let (destinationId, destinationSize, destinationGone) = dst.entry.withLock { es in (es.id, es.size, es.deleted || es.stale) }
        guard !sourceGone, !destinationGone, sourceId != destinationId else { return .fallBack("a deleted or replaced file") }
        let (found, sourceDirty) = placeholders.snapshot(sourceId)
        guard let source = found, source.kind == .file, source.size > 0 else { return .fallBack("not a file with content") }
        guard !sourceDirty else { return .fallBack("\(sourceId) has changes not uploaded yet") }
        // The kernel asks for at most `maxCopyReply` bytes at a time (its clamp of cp's "all of
        // it"): a request of exactly that from 0 of a larger file is taken as the whole file.
        guard length >= source.size || length == Self.maxCopyReply else { return .fallBack("\(length) of \(source.size) bytes") }
        guard source.size <= copier.maxServerSideCopySize ?? .max else {
            return .fallBack("\(source.size) bytes is more than one server-side copy does")
        }
        guard destinationSize == 0 else { return .fallBack("the destination is not empty") }
        // The destination must be new here, with no upload begun and no other handle on it;
        // marked as uploading while the remote copies, so no close or fsync starts one.
        let claimed = lock.withLock { s -> (generation: Int, since: Double)? in
            guard handles.count(of: dst.entry) == 1 else { return nil }
            return s.dirty.claimForCopy(destinationId)
        }
        guard let claimed else { return .fallBack("the destination is not a file just created here") }
        log.debug("copy \(sourceId) -> \(destinationId) at \(provider.remoteDescription) (\(source.size) bytes)")
        var copy: Item
        do {
            copy = try await copier.copyItem(source, to: destinationId)
        } catch {
            releaseClaim(destinationId, handle: destinationHandle)
            if error is CancellationError { throw error }
            // The kernel copies through reads and writes instead; if the remote made the copy
            // after all (an answer lost), the upload of that finds the same content there.
            log.info("server-side copy of \(sourceId) to \(destinationId) failed (\(error)); copied through this machine instead")
            return .fallBack("\(error)")
        }
        copy.identifier = destinationId
        copy.kind = .file
        let version = Domain.contentVersion(copy)
        // Its handle may be closed already (the request answered ETIMEDOUT or EINTR and the
        // program went on): the copy is still what the new, empty file becomes. Recorded in
        // three steps as an upload is (`commit`): claimed, the store written without
        // `Domain.lock`, then memory.
        let begun = lock.withLock { s in
            s.dirty.beginCommit(destinationId, generation: claimed.generation, since: claimed.since, version: copy.version)
        }
        var recorded = false
        if begun != nil {
            do {
                // Placeholder and journal in one transaction: after a crash the copy is either
                // recorded or still a pending (empty) new file, never both.
                try store.commitUpload(copy, contentVersion: version, journalSince: claimed.since)
                recorded = true
            } catch {
                log.error("cannot record the copy \(destinationId): \(error)")
            }
        }
        var emptyFile: String?
        let committed: DirtyState? = lock.withLock { s in
            guard recorded, let d = s.dirty.unchanged(destinationId, generation: claimed.generation) else {
                s.dirty.endCommit(destinationId)
                return nil
            }
            // The empty local file is dropped (its record and file after the lock); its handle
            // keeps its descriptor until replaced below.
            emptyFile = content.detach(destinationId)
            s.namespace.replaceIfListed(copy, noting: true)
            handles.forgetOpenedVersion(destinationId)
            return s.dirty.confirmed(destinationId) ?? d
        }
        if let emptyFile { content.removeRecord(destinationId, file: emptyFile) }
        guard let committed else {
            // Changed here while the remote copied (the kernel serialises writes with the copy, so
            // this is not expected): the local file stays pending and its upload meets the copy
            // (same content: recorded; else a conflict copy). Nothing is lost either way.
            releaseClaim(destinationId, handle: destinationHandle)
            log.warning("\(destinationId) changed during its server-side copy; the local content will be uploaded over it")
            return .fallBack("the destination changed during the copy")
        }
        // The handle now reads the copy (on demand); a write through it first fetches the whole
        // content (`prepareForWriting`), as an open for writing does.
        do {
            let entry = try content.retain(item: copy, version: version, asHandle: true)
            let swapped = handles.replace(destinationHandle, ifStill: dst,
                                          with: OpenFile(item: copy, entry: entry, writable: false, copiedFrom: sourceId))
            content.release(swapped ? dst.entry : entry, asHandle: true)
        } catch {
            log.warning("after copying \(destinationId): \(error); its handle keeps the old (empty) file")
        }
        for waiter in committed.waiters { waiter.resume() }
        log.info("copied \(sourceId) to \(destinationId) at \(provider.remoteDescription) (\(copy.size) bytes, version \(copy.version ?? "-")), no bytes through this machine")
        return .copied(min(copy.size, length, Self.maxCopyReply))
    }

    /// Ends the claim `copyRange` put on a new file without a copy: its upload starts at its
    /// close as for any new file — now only if it was closed meanwhile (while its handle is
    /// open, the kernel may still be writing the copy into it).
    private func releaseClaim(_ id: ItemIdentifier, handle: UInt64) {
        let closed = lock.withLock { s -> Bool in
            guard s.dirty.releaseClaim(id) else { return false }
            return handles.file(handle) == nil
        }
        if closed { writing.writeBack.scheduleUpload(id, host: writing) }
    }
}
