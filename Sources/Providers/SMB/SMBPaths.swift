import FavFSCore

/// Item identifiers → libsmbclient URLs (`smb://host/share/folder/name`). libsmbclient
/// percent-decodes the whole path and reads `?` as the start of options, so every byte of a
/// name but the unreserved ones is percent-encoded.
struct SMBPaths: Sendable {
    let host: String
    /// The share and the folder in it the remote's root is, `/share/folder` (no trailing `/`).
    let rootPath: String

    /// `rootPath` from a URL's path: the share is its first component.
    init(host: String, path: String) {
        self.host = host
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        rootPath = p
    }

    /// The share's name.
    var share: String { String(rootPath.dropFirst().split(separator: "/", maxSplits: 1).first ?? "") }

    func url(_ id: ItemIdentifier) -> String {
        let path = id.isRoot ? rootPath : rootPath + id.rawValue
        return "smb://" + host + PercentEncoding.strict(path, keepSlash: true)
    }
}
