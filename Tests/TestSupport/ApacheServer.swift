import Foundation

/// A real Apache httpd with mod_dav, on a free loopback port, with a private config under a
/// temp folder. Apache will not run workers as root, so the served folder is owned by www-data.
/// In `.autoindex` mode the folder is served read-only as mod_autoindex pages, without DAV.
public final class ApacheServer: @unchecked Sendable {
    public enum Auth: Sendable { case none, basic(user: String, password: String), digest(user: String, password: String) }
    /// `.webdav`: DAV On (the default). `.autoindex`: no DAV, directory index pages only;
    /// `fancy` turns on `IndexOptions FancyIndexing HTMLTable` (columns, sort links, rounded sizes).
    public enum Mode: Sendable, Equatable { case webdav, autoindex(fancy: Bool) }

    public let root: URL          // private config, logs, pid, lock db
    public let documentRoot: URL  // what /files/ serves
    public let port: Int
    public let auth: Auth
    public let mode: Mode
    public var baseURL: String { "http://127.0.0.1:\(port)/files/" }
    public var davURL: String { "dav://127.0.0.1:\(port)/files/" }
    public var accessLog: URL { root.appendingPathComponent("access.log") }
    public private(set) var isRunning = false
    private let extraConfig: String

    /// Creates the folders and config; `start()` runs the server.
    /// `extraConfig`: lines appended to httpd.conf (e.g. a `<Location>` with limits).
    public init(auth: Auth = .none, port: Int? = nil, mode: Mode = .webdav, extraConfig: String = "") throws {
        self.extraConfig = extraConfig
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-apache-\(UUID().uuidString.prefix(8))")
        documentRoot = root.appendingPathComponent("files")
        self.auth = auth
        self.mode = mode
        self.port = try port ?? FreePort.next()
        try FileManager.default.createDirectory(at: documentRoot, withIntermediateDirectories: true)
        try writeConfig()
    }

    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/sbin/apache2") }

    private func writeConfig() throws {
        let mods = "/usr/lib/apache2/modules"
        var authBlock = ""
        switch auth {
        case .none: break
        case let .basic(user, password):
            _ = try Shell.run("/usr/bin/htpasswd", ["-cb", root.appendingPathComponent("htpasswd").path, user, password])
            authBlock = """
                AuthType Basic
                AuthName "favfs"
                AuthBasicProvider file
                AuthUserFile \(root.path)/htpasswd
                Require valid-user
            """
        case let .digest(user, password):
            let ha1 = Shell.md5Hex("\(user):favfs:\(password)")
            try "\(user):favfs:\(ha1)\n".write(to: root.appendingPathComponent("htdigest"), atomically: true, encoding: .utf8)
            authBlock = """
                AuthType Digest
                AuthName "favfs"
                AuthDigestProvider file
                AuthUserFile \(root.path)/htdigest
                Require valid-user
            """
        }
        let conf = """
        ServerRoot "\(root.path)"
        ServerName 127.0.0.1
        Listen 127.0.0.1:\(port)
        PidFile \(root.path)/httpd.pid
        ErrorLog \(root.path)/error.log
        LogLevel warn
        User www-data
        Group www-data
        LoadModule mpm_event_module \(mods)/mod_mpm_event.so
        LoadModule authn_core_module \(mods)/mod_authn_core.so
        LoadModule authn_file_module \(mods)/mod_authn_file.so
        LoadModule authz_core_module \(mods)/mod_authz_core.so
        LoadModule authz_user_module \(mods)/mod_authz_user.so
        LoadModule auth_basic_module \(mods)/mod_auth_basic.so
        LoadModule auth_digest_module \(mods)/mod_auth_digest.so
        LoadModule alias_module \(mods)/mod_alias.so
        LoadModule dav_module \(mods)/mod_dav.so
        LoadModule dav_fs_module \(mods)/mod_dav_fs.so
        LoadModule autoindex_module \(mods)/mod_autoindex.so
        LoadModule dir_module \(mods)/mod_dir.so
        LoadModule mime_module \(mods)/mod_mime.so
        TypesConfig /etc/mime.types
        # method, path+query, status, body bytes sent, Range header
        LogFormat "%m %U%q %>s %B \\"%{Range}i\\"" favfs
        CustomLog \(root.path)/access.log favfs
        DAVLockDB \(root.path)/lock/DAVLock
        Timeout 30
        KeepAlive On
        MaxKeepAliveRequests 0
        StartServers 1
        ThreadsPerChild 25
        MaxRequestWorkers 50
        DocumentRoot "\(root.path)/docroot"
        Alias /files "\(documentRoot.path)"
        <Directory "\(documentRoot.path)">
            \(directoryModeLine)
            Options +Indexes
            AllowOverride None
            DirectoryIndex disabled
            \(authBlock.isEmpty ? "Require all granted" : authBlock)
        </Directory>
        \(extraConfig)
        """
        try FileManager.default.createDirectory(at: root.appendingPathComponent("lock"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("docroot"), withIntermediateDirectories: true)
        try conf.write(to: root.appendingPathComponent("httpd.conf"), atomically: true, encoding: .utf8)
    }

    /// The first line of the served folder's <Directory> block.
    private var directoryModeLine: String {
        switch mode {
        case .webdav: return "DAV On"
        case .autoindex(let fancy): return fancy ? "IndexOptions FancyIndexing HTMLTable" : "IndexOptions None"
        }
    }

    /// Gives the served tree and lock folder to www-data (after the test wrote into it).
    /// Writes `files` (paths relative to the served folder, parents made) behind the server's back.
    public func write(_ files: [String: Data]) throws {
        for (path, data) in files {
            let url = documentRoot.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        if isRunning { try fixOwnership() }
    }

    public func fixOwnership() throws {
        _ = try Shell.run("/bin/chown", ["-R", "www-data:www-data", documentRoot.path, root.appendingPathComponent("lock").path])
        _ = try Shell.run("/bin/chmod", ["755", root.path])
    }

    /// Starts httpd and waits until it accepts connections.
    public func start() throws {
        try fixOwnership()
        try? FileManager.default.removeItem(at: root.appendingPathComponent("httpd.pid"))
        let r = try Shell.run("/usr/sbin/apache2", ["-f", root.appendingPathComponent("httpd.conf").path, "-k", "start"])
        guard r.status == 0 else { throw ShellError("apache2 did not start: \(r.output) \(r.error) \(errorLog())") }
        guard FreePort.waitUntilListening(port: port, timeout: 10) else {
            throw ShellError("apache2 is not listening on \(port): \(errorLog())")
        }
        isRunning = true
        // apache2 -k start daemonizes: if this test process ends without stop() (a shared
        // server, a crash), the server must not outlive it. Signals only: no spawning at exit.
        let pidFile = root.appendingPathComponent("httpd.pid").path
        ProcessReaper.atExit {
            guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                  let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0 else { return }
            kill(pid, SIGTERM)
        }
    }

    /// Stops httpd and waits until its port is closed.
    public func stop() {
        guard isRunning else { return }
        _ = try? Shell.run("/usr/sbin/apache2", ["-f", root.appendingPathComponent("httpd.conf").path, "-k", "stop"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && FreePort.isListening(port: port) { usleep(50_000) }
        // -k stop returns before the workers are gone; wait for the pid file to go too.
        while Date() < deadline && FileManager.default.fileExists(atPath: root.appendingPathComponent("httpd.pid").path) { usleep(50_000) }
        isRunning = false
    }

    /// Stops every process of this server with SIGSTOP (a server that hangs: connections are
    /// accepted by the kernel, nothing answers); `resume()` continues them.
    public func pause() { signalAll(SIGSTOP) }
    public func resume() { signalAll(SIGCONT) }

    private func signalAll(_ signal: Int32) {
        for pid in MountedFavFS.processes(mentioning: root.appendingPathComponent("httpd.conf").path) { kill(pid, signal) }
    }

    public func errorLog() -> String {
        (try? String(contentsOf: root.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    /// The access log's lines: `METHOD /path?query STATUS BYTES "RANGE"`.
    public func accessLogLines() -> [String] {
        ((try? String(contentsOf: accessLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The access log once `ready` holds for it, or as it is after `within` seconds. Apache logs a
    /// request after its reply has gone out — later still for a refused body it drains first — so a
    /// test that counts requests right after a reply waits for the line it expects.
    public func accessLogLines(within seconds: Double = 10, until ready: ([String]) -> Bool) -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        var lines = accessLogLines()
        while !ready(lines) && Date() < deadline {
            usleep(20_000)
            lines = accessLogLines()
        }
        return lines
    }

    /// Removes config, logs and served files.
    public func remove() {
        stop()
        // FAVFS_TEST_LOGS=DIR keeps the access and error logs (for debugging a failed run).
        if let dir = ProcessInfo.processInfo.environment["FAVFS_TEST_LOGS"] {
            try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for name in ["access.log", "error.log"] {
                try? FileManager.default.copyItem(at: root.appendingPathComponent(name),
                                                  to: URL(fileURLWithPath: dir).appendingPathComponent("apache-\(port)-\(name)"))
            }
        }
        try? FileManager.default.removeItem(at: root)
    }

    deinit { stop() }
}

extension ApacheServer {
    /// A started WebDAV server whose folder `/files/small` refuses any upload over `limit`
    /// bytes for good (413: LimitRequestBody), for tests of refused uploads.
    public static func refusingLargeUploads(in folder: String = "small", limit: Int = 1000) throws -> ApacheServer {
        let apache = try ApacheServer(extraConfig: """
            <Location /files/\(folder)>
                LimitRequestBody \(limit)
            </Location>
            """)
        try FileManager.default.createDirectory(at: apache.documentRoot.appendingPathComponent(folder), withIntermediateDirectories: true)
        try apache.start()
        return apache
    }
}
