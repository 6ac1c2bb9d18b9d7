import Foundation

/// glibc malloc settings for the mount process, set before it starts threads. A user's own
/// `MALLOC_ARENA_MAX` / `MALLOC_MMAP_THRESHOLD_` win.
enum MallocTuning {
    // <malloc.h> is not part of Swift's Glibc module; these are its (stable ABI) values.
    private static let M_MMAP_THRESHOLD: Int32 = -3
    private static let M_ARENA_MAX: Int32 = -8

    static func apply() {
        let env = ProcessInfo.processInfo.environment
        // glibc gives each thread that mallocs its own arena; with a dozen FUSE workers and
        // Swift's pool the daemon's memory grew with the size of what was read. Two are plenty.
        if env["MALLOC_ARENA_MAX"] == nil { _ = mallopt(M_ARENA_MAX, 2) }
        // A fixed threshold (glibc's moves up to 32 MiB after the first large free): buffers of
        // a large listing (arrays, dictionaries of 100,000 entries) are mapped and given back
        // when freed instead of fragmenting the heap (100,000-entry folder: peak 94 → 84 MiB).
        if env["MALLOC_MMAP_THRESHOLD_"] == nil { _ = mallopt(M_MMAP_THRESHOLD, 1 << 20) }
    }
}

@_silgen_name("mallopt")
private func mallopt(_ param: Int32, _ value: Int32) -> Int32
