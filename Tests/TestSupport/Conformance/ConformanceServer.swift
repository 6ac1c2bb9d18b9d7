import Foundation

/// How to reach a test server as a favfs remote: the URL, provider options and the secret.
public struct ConformanceRemote: Sendable, CustomStringConvertible {
    public var url: String
    public var options: [String: String]
    /// The password / secret key; passed to favfs with --password-stdin, never on a command line.
    public var secret: String?

    public init(url: String, options: [String: String] = [:], secret: String? = nil) {
        self.url = url; self.options = options; self.secret = secret
    }

    /// The URL with the options in its query: a one-off remote for `favfs mount --remote`.
    public var urlWithOptions: String {
        guard !options.isEmpty else { return url }
        var comps = URLComponents(string: url)!
        comps.queryItems = (comps.queryItems ?? []) + options.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        // '+' is a space in form encoding: keep it literal.
        comps.percentEncodedQuery = comps.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return comps.string!
    }

    public var description: String { urlWithOptions }
}

/// What a provider and its server can do, so one suite can run against all of them.
public struct ConformanceTraits: Sendable {
    /// The provider is a `WritableProvider` (upload, mkdir, delete, rename).
    public var writable = true
    /// Symlinks are listed as symlinks and `createSymlink` works.
    public var symlinks = false
    /// `setModified` sets a file's mtime at the remote.
    public var keepsModified = false
    /// An upload with a stale `mustMatch` version fails with `.versionChanged` (a conflict).
    public var detectsConflicts = true
    /// Of two uploads based on one version at the same moment, at most one lands (the server
    /// checks the version with the write, or locks). nginx checks nothing: favfs compares in a
    /// PROPFIND right before the PUT, and two writers within that round trip both land.
    public var conditionalWritesAreAtomic = true
    /// Listed mtimes equal the server's to within this many seconds (nil: the remote has none).
    public var modifiedPrecision: Double? = 1
    /// The option that sets how many entries one listing page has, to test paging (S3: "max_keys").
    public var pageSizeOption: String?
    /// An empty folder made at the server is listed (S3: only as a "folder/" marker object).
    public var listsEmptyFolders = true
    /// Uploads larger than this fail with `.tooLarge` (Favart: 25 MiB).
    public var maxUploadSize: Int64?
    /// The remote has authentication, so a wrong credential must give `.denied`.
    public var hasAuthentication = true
    /// Listings show names that start with a dot (nginx's dav-ext and autoindex modules leave
    /// them out: `.git` is not seen from a mount that did not make it; vsftpd shows them to
    /// `LIST -a`).
    public var listsDotNames = true
    /// Characters a name on the remote cannot have as such (SMB: `\ : * ? " < > |` and control
    /// characters; Samba lists a file named so on its disk under a mangled 8.3 name).
    public var forbiddenNameCharacters: Set<Character> = []
    /// A name may end in a dot or a space (SMB: no, as on Windows).
    public var keepsTrailingDotsAndSpaces = true

    /// Whether a file named `name` on the server is listed under that name.
    public func keeps(name: String) -> Bool {
        if name.contains(where: { forbiddenNameCharacters.contains($0) }) { return false }
        if !keepsTrailingDotsAndSpaces, let last = name.last, last == "." || last == " " { return false }
        return true
    }

    public init() {}
}

/// A real server for one provider, started on 127.0.0.1 by the tests, plus a way to put content
/// on it and look at it without going through favfs. One instance per test process; tests use
/// their own subfolder of the remote, so they can share it and run in parallel.
///
/// Paths are relative to the remote's root, "/"-separated, without a leading "/".
public protocol ConformanceServer: AnyObject, Sendable {
    /// Short name for test output: "webdav", "s3", "sftp", ...
    var name: String { get }
    var traits: ConformanceTraits { get }

    /// Starts the server if it is not running; idempotent and safe to call from many tests.
    func start() throws
    /// Stops it (the suite never needs this between tests; for cleanup).
    func stop()

    /// The remote as favfs reaches it.
    func remote() -> ConformanceRemote
    /// The same remote with a wrong password/key; nil when the protocol has no authentication.
    func remoteWithWrongCredentials() -> ConformanceRemote?
    /// The same remote on a loopback port where nothing listens; nil when there is no server (local).
    func remoteThatIsDown() throws -> ConformanceRemote?

    /// The name a test file gets on this remote (Favart lists only images: "x" → "x.jpg").
    func fileName(_ base: String) -> String

    /// Server side: creates `folders` and writes `files` (parents implied), bypassing favfs.
    func seed(files: [String: Data], folders: [String]) throws
    /// Server side: a file's bytes, or nil when there is no such file.
    func contents(of path: String) throws -> Data?
    /// Server side: whether a file or folder exists at `path`.
    func exists(_ path: String) throws -> Bool
    /// Server side: replaces a file's bytes so that its version changes (for conflicts).
    func overwrite(_ path: String, with data: Data) throws
    /// Server side: removes a file, or a folder with everything in it.
    func remove(_ path: String) throws
}

extension ConformanceServer {
    public func fileName(_ base: String) -> String { base }
}
