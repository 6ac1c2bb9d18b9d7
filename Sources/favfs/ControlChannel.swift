import Foundation

/// The line protocol between `favfs unmount` and the mount's daemon, over a Unix socket named
/// after the mount point in a folder only this user can enter (`Paths.runtimeDir`): nobody else
/// can take the name first. Both ends check the other's uid (SO_PEERCRED): the daemon talks only
/// to its user or root, and the client trusts only a daemon of its own user (or root).
///
///     client: prepare-unmount keep-cache=0|1      daemon: ready
///     client: cancel                               (the unmount failed; carry on)
///     (the kernel unmount ends the loop)           daemon: evicted FILES BYTES, then closes
enum ControlChannel {
    /// The socket's path for `mountpoint` in this user's folder; nil when there is no private
    /// folder for it.
    static func path(for mountpoint: String) -> String? {
        guard let dir = Paths.runtimeDir() else { return nil }
        return (dir as NSString).appendingPathComponent(socketName(mountpoint))
    }

    static func socketName(_ mountpoint: String) -> String {
        var h: UInt64 = 0xcbf29ce484222325
        for b in mountpoint.utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        return "\(String(h, radix: 16)).sock"
    }

    /// Where the daemon of `mountpoint` may listen: the folders of the uid that mounted it (from
    /// mountinfo), then this user's, then `$XDG_RUNTIME_DIR/favfs` (older versions).
    static func candidates(for mountpoint: String) -> [(path: String, owner: uid_t)] {
        var uids = [getuid()]
        if let owner = Paths.fuseOwner(of: mountpoint), owner != getuid() { uids.insert(owner, at: 0) }
        var seen = Set<String>()
        return uids.flatMap { uid in
            Paths.controlDirectories(uid: uid, includeEnvironment: uid == getuid()).map {
                ((($0 as NSString).appendingPathComponent(socketName(mountpoint))), uid)
            }
        }.filter { seen.insert($0.path).inserted }
    }

    static func address(path: String) -> (sockaddr_un, socklen_t)? {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8) + [0]
        let fits = withUnsafeMutableBytes(of: &addr.sun_path) { raw -> Bool in
            guard bytes.count <= raw.count else { return false }
            for (i, b) in bytes.enumerated() { raw[i] = b }
            return true
        }
        guard fits else { return nil }
        return (addr, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count))
    }

    /// The uid at the other end of a connected socket.
    static func peerUID(_ fd: Int32) -> uid_t? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (hidden behind _GNU_SOURCE)
        var cred: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var clen = socklen_t(12)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 else { return nil }
        return cred.uid
    }

    static func withSockaddr<T>(_ addr: inout sockaddr_un, _ body: (UnsafePointer<sockaddr>) -> T) -> T {
        withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
    }

    /// Connects to the daemon of `mountpoint`; nil when none listens.
    static func connect(mountpoint: String) -> LineSocket? {
        for (path, owner) in candidates(for: mountpoint) {
            guard let (found, len) = address(path: path) else { continue }
            var addr = found
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return nil }
            let ok = withSockaddr(&addr) { Glibc.connect(fd, $0, len) == 0 }
            // Believed: a daemon of this user or root, or (for root) of the user who mounted it.
            guard ok, let uid = peerUID(fd), uid == getuid() || uid == 0 || (getuid() == 0 && uid == owner) else {
                close(fd)
                continue
            }
            return LineSocket(fd: fd)
        }
        return nil
    }

    /// Listens for `favfs unmount` on `mountpoint`'s address; each connection is handed to
    /// `handler` on its own thread.
    static func listen(mountpoint: String, handler: @escaping @Sendable (LineSocket) -> Void) throws {
        guard let path = path(for: mountpoint), let (found, len) = address(path: path) else {
            throw CLIError("no private folder for the control socket (\(Paths.controlDirectories(uid: getuid()).joined(separator: " or ")) is missing or not this user's own 0700 folder)", status: .configuration)
        }
        if let other = connect(mountpoint: mountpoint) {
            other.close()
            throw CLIError("another favfs process already serves \(mountpoint)", status: .configuration)
        }
        var addr = found
        unlink(path)  // left by a daemon that was killed
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CLIError("cannot create the control socket: \(String(cString: strerror(errno)))", status: .ioError) }
        let bound = withSockaddr(&addr) { bind(fd, $0, len) == 0 }
        guard bound, chmod(path, 0o600) == 0, Glibc.listen(fd, 8) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw CLIError("cannot listen on the control socket \(path): \(reason)", status: .ioError)
        }
        let me = getuid()
        Thread.detachNewThread {
            while true {
                let c = accept(fd, nil, nil)
                if c < 0 { if errno == EINTR { continue }; return }
                _ = fcntl(c, F_SETFD, FD_CLOEXEC)
                guard let uid = peerUID(c), uid == me || uid == 0 else { close(c); continue }
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

/// An error for the user: printed as is, and the exit status that classifies it (sysexits).
struct CLIError: Error, CustomStringConvertible {
    let description: String
    let status: ExitStatus
    init(_ d: String, status: ExitStatus = .failure) { description = d; self.status = status }

    /// Prints the message (no "Error:" prefix: it already says what failed) and exits.
    func exit() -> Never {
        FileHandle.standardError.write(Data((description.hasPrefix("favfs:") ? description : "favfs: " + description).utf8 + [10]))
        Glibc.exit(status.rawValue)
    }
}
