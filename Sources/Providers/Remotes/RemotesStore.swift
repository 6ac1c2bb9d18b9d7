import Foundation

/// The remotes file on disk: `$XDG_CONFIG_HOME/favfs/remotes.toml` (default
/// `~/.config/favfs/remotes.toml`).
///
/// It holds secrets, so: its folder is created 0700, the file 0600 from its creation (a temp file
/// renamed over the old one: a crash never leaves half a file), and a file that group or others can
/// access, or that another user owns, is refused rather than read.
public struct RemotesStore: Sendable {
    public let path: String

    public init(path: String = RemotesStore.defaultPath()) { self.path = path }

    /// `$XDG_CONFIG_HOME/favfs/remotes.toml`; XDG says a relative or empty value is ignored.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (NSHomeDirectory() as NSString).appendingPathComponent(".config")
        return ((base as NSString).appendingPathComponent("favfs") as NSString).appendingPathComponent("remotes.toml")
    }

    /// The remotes; none when the file does not exist yet.
    public func load() throws(RemotesError) -> RemotesFile {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return RemotesFile() }
            throw RemotesError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        // Checked on the opened file itself, so a swap between check and read cannot slip by.
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw RemotesError("cannot stat \(path): \(String(cString: strerror(errno)))") }
        try Self.checkPrivate(st, path: path)
        var data = Data()
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw RemotesError("cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            data.append(contentsOf: buf[..<n])
        }
        guard let text = String(data: data, encoding: .utf8) else { throw RemotesError("\(path) is not UTF-8 text") }
        do { return try RemotesFile(parsing: text) } catch {
            throw RemotesError("\(path), line \(error.line): \(error.problem)")
        }
    }

    /// A regular file, owned by this user, no access for group or others.
    static func checkPrivate(_ st: stat, path: String) throws(RemotesError) {
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw RemotesError("\(path) is not a regular file") }
        let me = geteuid()
        guard st.st_uid == me else {
            throw RemotesError("\(path) is owned by uid \(st.st_uid), not by you (uid \(me)); favfs reads secrets only from your own file: chown \(me) \(path) && chmod 600 \(path)")
        }
        let mode = st.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw RemotesError("\(path) can be accessed by group or others (mode 0\(String(mode, radix: 8))) and it holds secrets; favfs refuses it until you run: chmod 600 \(path)")
        }
    }

    /// Reads, changes and writes the file under a lock, so two `favfs remote` commands at once
    /// cannot lose each other's change. Returns what `body` returns.
    @discardableResult
    public func update<T>(_ body: (inout RemotesFile) throws(RemotesError) -> T) throws(RemotesError) -> T {
        let dir = (path as NSString).deletingLastPathComponent
        try Self.makeFolder(dir)
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dfd >= 0 else { throw RemotesError("cannot open \(dir): \(String(cString: strerror(errno)))") }
        defer { close(dfd) }
        while flock(dfd, LOCK_EX) != 0 && errno == EINTR {}
        var file = try load()
        let result = try body(&file)
        try write(file, folderFD: dfd)
        return result
    }

    /// The folder, created 0700 where missing (parents too: `~/.config` may not exist yet).
    static func makeFolder(_ dir: String) throws(RemotesError) {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) {
            guard isDir.boolValue else { throw RemotesError("\(dir) is not a folder") }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw RemotesError("cannot create \(dir): \(error.localizedDescription)")
        }
    }

    /// Temp file (mkstemp: 0600 from its creation) in the same folder, fsync, rename over the file,
    /// fsync the folder.
    private func write(_ file: RemotesFile, folderFD: Int32) throws(RemotesError) {
        let dir = (path as NSString).deletingLastPathComponent
        var template = Array((dir as NSString).appendingPathComponent(".remotes.toml.XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw RemotesError("cannot create a file in \(dir): \(String(cString: strerror(errno)))") }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let tmp = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var ok = false
        defer { if !ok { unlink(tmp) } }
        _ = fchmod(fd, 0o600)
        let bytes = Array(file.serialized().utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                let e = String(cString: strerror(errno))
                close(fd)
                throw RemotesError("cannot write \(tmp): \(e)")
            }
            off += n
        }
        let synced = fsync(fd) == 0
        let e = errno
        guard close(fd) == 0, synced else { throw RemotesError("cannot write \(tmp): \(String(cString: strerror(synced ? errno : e)))") }
        guard rename(tmp, path) == 0 else { throw RemotesError("cannot replace \(path): \(String(cString: strerror(errno)))") }
        ok = true
        _ = fsync(folderFD)
    }
}
