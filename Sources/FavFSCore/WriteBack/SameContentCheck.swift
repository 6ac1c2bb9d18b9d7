import Foundation

/// Re-uploading what the server already has is not a conflict. A kill between a confirmed upload
/// and the journal update (or a reply lost on the way back) leaves a journal row whose base
/// version is older than the server's; the next upload's precondition then fails although the
/// server holds exactly the local bytes. Before a conflict copy is made, the remote content is
/// compared with the local one, byte for byte. After an attempt whose answer was lost, what it
/// sent is noted (its length and digest), so the server's copy is later known as ours.
/// Stateless but for what it notes in the dirty set.
final class SameContentCheck: Sendable {
    let provider: any Provider
    let content: ContentCache
    let store: PlaceholderStore
    /// `Domain.lock`: the lost replies noted in the dirty set.
    let lock: Guarded<DomainState>

    init(provider: any Provider, content: ContentCache, store: PlaceholderStore, lock: Guarded<DomainState>) {
        self.provider = provider
        self.content = content
        self.store = store
        self.lock = lock
    }

    /// Content larger than this is not fetched to compare: a conflict copy is made instead (it
    /// loses nothing; the comparison would cost a download of the whole file).
    static let sameContentCheckLimit: Int64 = 1 << 30

    /// The remote item, when the remote file at `id` has exactly the bytes of `id`'s cache file;
    /// nil when it differs (or is gone). Throws when the server could not be asked (a transient
    /// error): that is not a difference, and must not make a conflict copy of identical bytes.
    func remoteItemWithSameContent(_ id: ItemIdentifier) async throws(ProviderError) -> Item? {
        guard let remote = try await remoteFile(id), let (local, length) = try? content.openForUpload(id) else { return nil }
        defer { close(local) }
        guard remote.size == length, length <= Self.sameContentCheckLimit, let fetched = try await fetch(remote) else { return nil }
        defer { close(fetched) }
        return Self.sameBytes(local, fetched, length: length) ? remote : nil
    }

    /// The remote's file at `id`; nil when there is none (gone, or not a file). Throws a
    /// transient error: the server could not be asked, which tells nothing.
    private func remoteFile(_ id: ItemIdentifier) async throws(ProviderError) -> Item? {
        do {
            let remote = try await provider.item(for: id)
            return remote.kind == .file ? remote : nil
        } catch let e as ProviderError where e.isTransient {
            throw e
        } catch {
            return nil
        }
    }

    /// The remote's bytes of `remote` in an unlinked file beside the cache (private, and gone
    /// whatever happens; the caller closes it); nil when they could not be had whole. Throws a
    /// transient error: the server could not be asked, which tells nothing.
    private func fetch(_ remote: Item) async throws(ProviderError) -> Int32? {
        let template = content.directory.deletingLastPathComponent().appendingPathComponent("compare-XXXXXX").path
        var name = Array(template.utf8CString)
        let fetched = name.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fetched >= 0 else { return nil }
        name.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        guard remote.size > 0 else { return fetched }
        do {
            let got = try await provider.readContents(of: remote, range: 0..<remote.size, into: ContentSink(fd: fetched))
            if got == 0..<remote.size { return fetched }
        } catch let e as ProviderError where e.isTransient {
            close(fetched)
            throw e
        } catch {}
        close(fetched)
        return nil
    }

    /// Notes what an upload attempt of `generation` sent, after it failed with a transient error:
    /// the request may have reached the server and only its answer been lost (a timeout), so
    /// the server may hold these bytes. Only while the content is still what the attempt sent
    /// (unchanged since `generation`, before and after it is read), once per generation.
    func noteLostReply(_ id: ItemIdentifier, generation: Int) {
        let known = lock.withLock { s in s.dirty.changed(id, since: generation) || s.dirty[id]?.lostReplies.last?.generation == generation }
        guard !known, let (fd, length) = try? content.openForUpload(id) else { return }
        defer { close(fd) }
        guard length <= Self.lostReplyCheckLimit, let digest = Self.digest(fd, length: length) else { return }
        let reply = LostReply(generation: generation, length: length, digest: digest)
        let replies = lock.withLock { s -> [LostReply]? in
            guard !s.dirty.changed(id, since: generation) else { return nil }
            s.dirty.replyLost(id, reply)
            return s.dirty[id]?.lostReplies
        }
        // Kept with the journal row: after a crash the server's copy is still known as ours.
        if let replies { try? store.saveLostReplies(id, replies.map { .init(length: $0.length, digest: $0.digest) }) }
    }

    /// Content larger than this is not hashed after a lost answer (nor fetched to compare).
    static let lostReplyCheckLimit: Int64 = 256 << 20

    /// The remote item and the generation it holds, when the remote file at `id` has exactly
    /// what an attempt whose answer was lost sent (`noteLostReply`): the server took that
    /// upload. Nil when it holds something else (another client's edit: a conflict). Throws a
    /// transient error: the server could not be asked.
    func remoteItemFromLostReply(_ id: ItemIdentifier, replies given: [LostReply]? = nil) async throws(ProviderError) -> (item: Item, generation: Int)? {
        let replies = given ?? lock.withLock { s in s.dirty[id]?.lostReplies ?? [] }
        guard !replies.isEmpty, let remote = try await remoteFile(id) else { return nil }
        guard replies.contains(where: { $0.length == remote.size }), let fetched = try await fetch(remote) else { return nil }
        defer { close(fetched) }
        guard let digest = Self.digest(fetched, length: remote.size),
              let reply = replies.last(where: { $0.length == remote.size && $0.digest == digest }) else { return nil }
        return (remote, reply.generation)
    }

    /// The remote file at `id` when it holds our bytes — the content here now, or what an
    /// attempt whose answer was lost sent (`lostReplies`, of a state already out of the dirty
    /// set) — else nil: absent, or another client's file.
    func remoteItemIfOurs(_ id: ItemIdentifier, lostReplies: [LostReply]) async throws(ProviderError) -> Item? {
        if let same = try await remoteItemWithSameContent(id) { return same }
        return try await remoteItemFromLostReply(id, replies: lostReplies)?.item
    }

    /// The SHA-256 of the first `length` bytes of `fd`; nil when they cannot be read.
    static func digest(_ fd: Int32, length: Int64) -> [UInt8]? {
        var hasher = SHA256.Hasher()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: Int64 = 0
        while offset < length {
            let want = Int(min(Int64(buffer.count), length - offset))
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(offset)) }
            guard n == want else { return nil }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0.prefix(want))) }
            offset += Int64(want)
        }
        return hasher.finalize()
    }

    /// Whether two files hold the same `length` bytes from offset 0.
    static func sameBytes(_ a: Int32, _ b: Int32, length: Int64) -> Bool {
        let chunk = 1 << 20
        var left = [UInt8](repeating: 0, count: chunk), right = [UInt8](repeating: 0, count: chunk)
        var offset: Int64 = 0
        while offset < length {
            let want = Int(min(Int64(chunk), length - offset))
            let n = left.withUnsafeMutableBytes { pread(a, $0.baseAddress, want, off_t(offset)) }
            let m = right.withUnsafeMutableBytes { pread(b, $0.baseAddress, want, off_t(offset)) }
            guard n == want, m == want, left.prefix(want) == right.prefix(want) else { return false }
            offset += Int64(want)
        }
        return true
    }
}
