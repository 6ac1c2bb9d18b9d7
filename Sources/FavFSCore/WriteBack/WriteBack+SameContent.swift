import Foundation

/// Re-uploading what the server already has is not a conflict. A kill between a confirmed upload
/// and the journal update (or a reply lost on the way back) leaves a journal row whose base
/// version is older than the server's; the next upload's precondition then fails although the
/// server holds exactly the local bytes. Before a conflict copy is made, the remote content is
/// compared with the local one, byte for byte.
extension WriteBack {
    /// Content larger than this is not fetched to compare: a conflict copy is made instead (it
    /// loses nothing; the comparison would cost a download of the whole file).
    static let sameContentCheckLimit: Int64 = 1 << 30

    /// The remote item, when the remote file at `id` has exactly the bytes of `id`'s cache file;
    /// nil when it differs (or is gone). Throws when the server could not be asked (a transient
    /// error): that is not a difference, and must not make a conflict copy of identical bytes.
    func remoteItemWithSameContent(_ id: ItemIdentifier) async throws(ProviderError) -> Item? {
        let remote: Item
        do {
            remote = try await provider.item(for: id)
        } catch let e as ProviderError where e.isTransient {
            throw e
        } catch {
            return nil
        }
        guard remote.kind == .file, let (local, length) = try? content.openForUpload(id) else { return nil }
        defer { close(local) }
        guard remote.size == length, length <= Self.sameContentCheckLimit else { return nil }
        // An unlinked file beside the cache: private, and gone whatever happens.
        let template = content.directory.deletingLastPathComponent().appendingPathComponent("compare-XXXXXX").path
        var name = Array(template.utf8CString)
        let fetched = name.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fetched >= 0 else { return nil }
        name.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        defer { close(fetched) }
        if length > 0 {
            let got: Range<Int64>
            do {
                got = try await provider.readContents(of: remote, range: 0..<length, into: ContentSink(fd: fetched))
            } catch let e as ProviderError where e.isTransient {
                throw e
            } catch {
                return nil
            }
            guard got == 0..<length else { return nil }
        }
        return Self.sameBytes(local, fetched, length: length) ? remote : nil
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
