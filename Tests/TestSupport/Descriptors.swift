import Foundation

/// Tests run in parallel, and a process a test starts inherits every descriptor of the test
/// process not marked close-on-exec, including files another test has open in its mount, which
/// would keep that mount busy while the child lives. Marks them all before a spawn.
enum Descriptors {
    static func closeOnExec(from lowest: Int32) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd >= lowest { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
    }
}
