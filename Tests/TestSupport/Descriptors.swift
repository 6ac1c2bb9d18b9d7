import Foundation

/// Tests run in parallel, and a process a test starts inherits every descriptor of the test
/// process not marked close-on-exec, including files another test has open in its mount, which
/// would keep that mount busy while the child lives. Marks them all before a spawn.
public enum Descriptors {
    static func closeOnExec(from lowest: Int32) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd >= lowest { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
    }

    /// A whole file's bytes, read through a close-on-exec descriptor. `FileManager.contents`
    /// opens without O_CLOEXEC, and a server another test spawns in that moment (after
    /// `closeOnExec` ran) would keep the file's mount busy for its whole life.
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
