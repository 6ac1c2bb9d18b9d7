import Foundation

/// nginx with `autoindex on` (exact sizes, GMT dates) serving a temp folder at `/files/`, with a
/// private config run in the foreground (`nginx -p PREFIX -c CONF -g 'daemon off;'`); or, with
/// `webdav`, Debian's WebDAV setup (the core dav module and libnginx-mod-http-dav-ext, as their
/// documentation configures them: no ETags in PROPFIND, no locks, If-Match ignored) behind Basic auth.
public final class NginxServer: @unchecked Sendable {
    public static let binary = "/usr/sbin/nginx"
    public let root: URL
    /// What `/files/` serves.
    public let documentRoot: URL
    public let port: Int
    public let exactSizes: Bool
    private var process: BackgroundProcess?
    public var baseURL: String { "http://127.0.0.1:\(port)/files/" }
    public var accessLog: URL { root.appendingPathComponent("access.log") }

    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    /// The dav-ext module Debian's libnginx-mod-http-dav-ext installs.
    public static let davExtModule = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so"
    public static var hasWebDAV: Bool { isAvailable && FileManager.default.fileExists(atPath: davExtModule) }

    public init(port: Int? = nil, exactSizes: Bool = true, webdav: (user: String, password: String)? = nil) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-nginx-\(UUID().uuidString.prefix(8))")
        documentRoot = root.appendingPathComponent("files")
        self.port = try port ?? FreePort.next()
        self.exactSizes = exactSizes
        let fm = FileManager.default
        try fm.createDirectory(at: documentRoot, withIntermediateDirectories: true)
        try fm.createDirectory(at: root.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        let r = root.path
        var location = """
                    alias \(documentRoot.path)/;
                    autoindex on;
                    autoindex_exact_size \(exactSizes ? "on" : "off");
            """
        var module = ""
        if let webdav {
            module = "load_module \(Self.davExtModule);"
            let hash = try Shell.run("/usr/bin/openssl", ["passwd", "-apr1", webdav.password]).output.trimmingCharacters(in: .whitespacesAndNewlines)
            try "\(webdav.user):\(hash)\n".write(to: root.appendingPathComponent("htpasswd"), atomically: true, encoding: .utf8)
            location = """
                    alias \(documentRoot.path)/;
                    dav_methods PUT DELETE MKCOL COPY MOVE;
                    dav_ext_methods PROPFIND OPTIONS;
                    dav_access user:rw group:rw all:r;
                    client_max_body_size 0;
                    auth_basic "favfs";
                    auth_basic_user_file \(r)/htpasswd;
            """
        }
        let conf = """
        \(module)
        worker_processes 1;
        pid \(r)/nginx.pid;
        error_log \(r)/error.log warn;
        events { worker_connections 512; }
        http {
            # method, path, status, body bytes, Range header
            log_format favfs '$request_method $uri $status $body_bytes_sent "$http_range"';
            access_log \(r)/access.log favfs;
            client_body_temp_path \(r)/tmp; proxy_temp_path \(r)/tmp; fastcgi_temp_path \(r)/tmp;
            uwsgi_temp_path \(r)/tmp; scgi_temp_path \(r)/tmp;
            keepalive_requests 100000;
            server {
                listen 127.0.0.1:\(self.port);
                location /files/ {
        \(location)
                }
            }
        }
        """
        try conf.write(to: root.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        // Workers run as nobody: the tree must be readable by others (and, for WebDAV, theirs).
        _ = try Shell.run("/bin/chmod", ["755", root.path])
        if webdav != nil { try fixOwnership() }
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    /// The served tree and nginx's temp folder belong to the workers' user (nobody), which
    /// writes there over WebDAV.
    public func fixOwnership() throws {
        _ = try Shell.run("/bin/chown", ["-R", "nobody:nogroup", documentRoot.path, root.appendingPathComponent("tmp").path])
    }

    public func start() throws {
        guard !isRunning else { return }
        let p = try BackgroundProcess(Self.binary, ["-p", root.path + "/", "-e", root.appendingPathComponent("error.log").path,
                                                    "-c", root.appendingPathComponent("nginx.conf").path, "-g", "daemon off;"],
                                      logFile: root.appendingPathComponent("server.log"))
        process = p
        guard FreePort.waitUntilListening(port: port, timeout: 10) else {
            p.stop()
            throw ShellError("nginx is not listening on \(port): \(p.log()) \(errorLog())")
        }
    }

    public func stop() {
        process?.stop()
        process = nil
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline && FreePort.isListening(port: port) { usleep(20_000) }
    }

    public func errorLog() -> String {
        (try? String(contentsOf: root.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    public func accessLogLines() -> [String] {
        ((try? String(contentsOf: accessLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    deinit { process?.stop(grace: 1) }
}
