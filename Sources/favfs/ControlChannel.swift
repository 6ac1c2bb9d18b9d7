import Foundation

/// The line protocol between `favfs unmount` and the mount's daemon, over an abstract Unix
/// socket named after the mount point (no file to clean up; gone when the daemon exits).
/// Only the mounting user or root may talk to it (SO_PEERCRED).
///
///     client: prepare-unmount keep-cache=0|1      daemon: ready
///     client: cancel                               (the unmount failed; carry on)
///     (the kernel unmount ends the loop)           daemon: evicted FILES BYTES, then closes
enum ControlChannel {
    static func address(for mountpoint: String) -> (sockaddr_un, socklen_t) {
        var h: UInt64 = 0xcbf29ce484222325
        for b in mountpoint.utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        let name = "favfs-\(getuid())-\(String(h, radix: 16))"
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = [UInt8(0)] + Array(name.utf8) // leading NUL: the abstract namespace
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() where i < raw.count { raw[i] = b }
        }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        return (addr, len)
    }

    static func withSockaddr<T>(_ addr: inout sockaddr_un, _ body: (UnsafePointer<sockaddr>) -> T) -> T {
        withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
    }

    /// Connects to the daemon of `mountpoint`; nil when none listens.
    static func connect(mountpoint: String) -> LineSocket? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var (addr, len) = address(for: mountpoint)
        let ok = withSockaddr(&addr) { Glibc.connect(fd, $0, len) == 0 }
        guard ok else { close(fd); return nil }
        return LineSocket(fd: fd)
    }

    /// Listens for `favfs unmount` on `mountpoint`'s address; each connection is handed to
    /// `handler` on its own thread.
    static func listen(mountpoint: String, handler: @escaping @Sendable (LineSocket) -> Void) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CLIError("cannot create the control socket: \(String(cString: strerror(errno)))") }
        var (addr, len) = address(for: mountpoint)
        let bound = withSockaddr(&addr) { bind(fd, $0, len) == 0 }
        guard bound, Glibc.listen(fd, 8) == 0 else {
            close(fd)
            throw CLIError("another favfs process already serves \(mountpoint)")
        }
        let me = getuid()
        Thread.detachNewThread {
            while true {
                let c = accept(fd, nil, nil)
                if c < 0 { if errno == EINTR { continue }; return }
                _ = fcntl(c, F_SETFD, FD_CLOEXEC)
                // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (hidden behind _GNU_SOURCE)
                var cred: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
                var clen = socklen_t(12)
                guard getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0, cred.uid == me || cred.uid == 0 else {
                    close(c); continue
                }
                let s = LineSocket(fd: c)
                Thread.detachNewThread { handler(s) }
            }
        }
    }
}

/// A connected socket (or a pipe, for reading) used in lines.
final class LineSocket: @unchecked Sendable {
    let fd: Int32
    private var buffer = [UInt8]()
    init(fd: Int32) { self.fd = fd }

    func send(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            off += n
        }
    }

    /// The next line, or nil at end of stream (or after `timeout` seconds, when given).
    func readLine(timeout: Double? = nil) -> String? {
        while true {
            if let nl = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return line
            }
            if let timeout {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let r = poll(&p, 1, Int32(timeout * 1000))
                if r < 0 && errno == EINTR { continue }
                if r <= 0 { return nil }
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            buffer += chunk[..<n]
        }
    }

    func close() { Glibc.close(fd) }
}

/// An error for the user: printed as is, exit status 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }

    /// Prints the message (no "Error:" prefix: it already says what failed) and exits 1.
    func exit() -> Never {
        FileHandle.standardError.write(Data((description.hasPrefix("favfs:") ? description : "favfs: " + description).utf8 + [10]))
        Glibc.exit(1)
    }
}
