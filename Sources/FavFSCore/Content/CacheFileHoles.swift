import CLinux
import Glibc

/// What a cache file really holds, asked of its file system: the bytes a drop punched out
/// (`favfs_punch_hole`) read as zeros, and a record saved before the drop (a save that failed
/// on a full disk, a crash between the two) would name them present. The holes of the file
/// say which they are.
enum CacheFileHoles {
    /// `ranges` less every hole of the file `fd` that cuts into them, widened by `margin` on
    /// both sides: a punch whose ends were not block-aligned zeroed the partial blocks at its
    /// ends without freeing them. A file system that cannot tell holes (lseek answers EINVAL)
    /// leaves `ranges` as they are; its punches fail too, so it has none. A file system that
    /// stores runs of zeros as holes (ZFS with compression) costs a download of those runs
    /// again, never a wrong byte.
    static func present(_ ranges: ByteRangeSet, in fd: Int32, size: Int64, margin: Int64) -> ByteRangeSet {
        guard !ranges.isEmpty else { return ranges }
        var kept = ranges
        var offset: Int64 = 0
        while offset < size {
            let hole = Int64(favfs_seek_hole(fd, off_t(offset)))
            guard hole >= 0, hole < size else { break }
            let data = Int64(favfs_seek_data(fd, off_t(hole)))
            // No data after it (ENXIO): the hole runs to the end.
            let end = data < 0 || data > size ? size : data
            if ranges.missing(in: hole..<end) != [hole..<end] {
                kept.remove(max(0, hole - margin)..<min(size, end + margin))
            }
            offset = end
        }
        return kept
    }
}
