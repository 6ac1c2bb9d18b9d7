import Foundation

/// Tests run in parallel, and a process a test starts inherits every descriptor of the test
/// process not marked close-on-exec, including files another test has open in its mount, which
/// would keep that mount busy while the child lives. Marking them close-on-exec before a spawn
/// leaves a window (a descriptor another thread opens between the marking and the spawn is
/// inherited; a CI run lost an unmount to EBUSY that way), so the child closes them itself.
public enum Descriptors {
    /// Adds "close every descriptor from `lowest` up" to a spawn's file actions (glibc's
    /// `posix_spawn_file_actions_addclosefrom_np`, 2.34+, which Swift's Glibc module does not
    /// show), run in the child after the actions added before it. Without it (an older glibc),
    /// marks the parent's descriptors close-on-exec, which leaves the window above.
    public static func closeInChild(_ actions: inout posix_spawn_file_actions_t, from lowest: Int32) {
        if let addCloseFrom = addCloseFrom, addCloseFrom(&actions, lowest) == 0 { return }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd >= lowest { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    /// A whole file's bytes, read through a close-on-exec descriptor. `FileManager.contents`
    /// opens without O_CLOEXEC, and a process spawned in that moment where `closeInChild`
    /// falls back to marking descriptors would keep the file's mount busy for its whole life.
    public static func contents(of path: String) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { return data }
            data.append(contentsOf: buffer[0..<n])
        }
    }
}
