import Foundation

/// Streamed uploads: a new file written in order from its first byte starts uploading once it
/// has the provider's `streamingThreshold` bytes, while the program is still writing (`cp` of a big file), so
/// the copy is on the server about when the program closes it, not one upload time later.
///
/// It changes nothing about what is promised: the journal row was written before the first
/// byte and goes only when the remote confirmed; the upload is conditional (`If-None-Match: *`)
/// and covers exactly the content at the last close (its generation). Anything out of the
/// ordinary — a write behind what was appended, a truncate, an fsync, a rename, a failure of the
/// transfer — gives the stream up, and the ordinary upload of the whole file takes over.
extension WriteBack {
    /// After a write landed in the cache file: an append feeds the running stream, or starts
    /// one past the threshold; a write anywhere else gives streaming up for this change.
    func streamAfterWrite(_ id: ItemIdentifier, offset: Int64, count: Int, host: any WriteBackHost) {
        guard count > 0, let (streamer, threshold) = streamer, !options.readOnly else { return }
        let end = offset + Int64(count)
        switch lock.withLock({ s in s.dirty.written(id, offset: offset, end: end, threshold: threshold) }) {
        case .nothing: break
        case .extend(let stream):
            stream.extend(to: end)
            content.transfers.grow(id, .upload, total: end)
        case .abandon(let stream): stream.abandon("a write at byte \(offset) went back over what was appended")
        case .start(let stream):
            log.debug("streaming the upload of \(id) while it is written (\(end) bytes so far)")
            if !tasks.start({ [self] in await streamUpload(id, stream, streamer, host: host) }) {
                stream.abandon("unmounting")
                _ = lock.withLock { s in s.dirty.streamGivenUp(id) }
            }
        }
    }

    /// Gives up the stream of `id`, if one runs (truncate, fsync, rename, delete, unmount): its
    /// transfer fails at its next read and the whole file is uploaded instead — at once when
    /// `uploadNow` (somebody waits for it), otherwise at the writer's close.
    func streamOutOfOrder(_ id: ItemIdentifier, _ reason: String, uploadNow: Bool = false) {
        lock.withLock { s in s.dirty.outOfOrder(id, uploadNow: uploadNow) }?.abandon(reason)
    }

    /// At the last close of a streamed file: the content is complete at `length`, as of the
    /// generation now.
    func endStream(_ id: ItemIdentifier, length: Int64) {
        lock.withLock { s in s.dirty.streamEnded(id) }?.finish(length: length)
    }

    private func streamUpload(_ id: ItemIdentifier, _ stream: GrowingContent, _ streamer: any StreamingUploadProvider, host: any WriteBackHost) async {
        var uploaded: Item?
        do {
            let (fd, _) = try content.openForUpload(id)
            defer { close(fd) }
            uploaded = try await content.transfers.track(id, .upload, total: stream.currentLength,
                                                         done: nil) {
                try await streamer.uploadStreaming(id, fd: fd, content: stream)
            }
        } catch {
            log.debug("streamed upload of \(id) given up (\(error)); the whole file is uploaded instead")
        }
        let endedAt = lock.withLock { s in s.dirty[id]?.streamEndedAt }
        if let uploaded, let endedAt {
            lock.withLock { s in s.dirty.streamDone(id) }
            if await commit(id, uploaded: uploaded, generation: endedAt, host: host) {
                log.debug("uploaded \(id) while it was written")
                return
            }
            await uploadLoop(id, host: host)  // written again after its close: the whole file, as always
            return
        }
        // The ordinary upload takes over: now if somebody waits for it or nothing writes the
        // file any more, otherwise at the writer's close (which sees no stream now).
        let (waiting, writers) = lock.withLock { s -> (Bool, [ContentEntry]) in
            guard s.dirty.isDirty(id) else { return (false, []) }
            return (s.dirty.streamGivenUp(id), handles.all.filter { $0.writable }.map { $0.entry })
        }
        let written = writers.contains { entry in entry.withLock { es in es.id } == id }
        if waiting || !written { scheduleUpload(id, host: host) }
    }
}
