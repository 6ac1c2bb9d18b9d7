import Foundation

extension Reading {
    /// Moves a reading handle that has served nothing yet to the version the remote has now:
    /// its open trusted a placeholder that is out of date (typically one of an earlier mount,
    /// the file changed at the server while nothing was mounted, its folder not listed again
    /// yet). The program then reads the new version whole instead of failing with `ESTALE`.
    /// Nil when the handle cannot move (it served bytes already, it writes, the item is no
    /// longer a clean file, the remote did not answer, the file got smaller): the read fails
    /// as before. A smaller file cannot be served through the old open: the kernel copies up to
    /// the size it was told, and a short reply shrinks that size only if no notification came
    /// in between (the listing that finds the change sends one), so the reader would get zeros
    /// past the new end. A larger one can: the bridge tells the kernel the new size first.
    func switchToNewerVersion(_ handle: UInt64, from old: OpenFile) async -> OpenFile? {
        guard !old.writable, old.copiedFrom == nil else { return nil }
        let id = old.item.identifier
        guard old.entry.withLock({ es in es.id == id && !es.deleted }) else { return nil }
        await enumerations.refreshItem(id)
        let (found, isDirty) = placeholders.snapshot(id)
        guard let item = found, item.kind == .file, !isDirty else { return nil }
        let version = Domain.contentVersion(item)
        guard version != Domain.contentVersion(old.item), item.size >= old.item.size else { return nil }
        guard let entry = try? retainForOpen(item, version: version, dirty: false) else { return nil }
        let newer = OpenFile(item: item, entry: entry)
        // Another read of this handle may have moved it already, or served a byte.
        guard old.retireIfUnserved() else {
            content.release(entry, asHandle: true)
            return handles.file(handle).flatMap { $0 === old ? nil : $0 }
        }
        guard handles.replaceReader(handle, old, with: newer, as: id, version: version) else {
            content.release(entry, asHandle: true)
            return nil
        }
        content.release(old.entry, asHandle: true)
        log.info("\(id) changed at the remote since its placeholder was stored: its reader moved to the new version (\(item.size) bytes)")
        return newer
    }
}
