import FavFSCore
import Foundation

/// Identifiers → Favart request URLs and form bodies.
///
/// The API addresses an item by its folder (`path=DIR`, relative to the media root, omitted for
/// the root) and its name (`id=NAME`). Query values are decoded by the server like form fields,
/// where `+` is a space and `&`/`=` split fields, so every byte outside RFC 3986's unreserved set
/// is percent-encoded: spaces, `+ & = # % ? ' ; :`, tabs, non-ASCII all reach the server as the
/// exact bytes of the name.
struct FavartURLs: Sendable {
    /// `http://host:port` or `https://host:port`, without a trailing slash.
    let baseURL: String
    /// The folder below the media root that is this remote's root (from the remote URL's path);
    /// empty for the whole media tree.
    let rootComponents: [String]

    init(baseURL: String, rootFolder: String) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        rootComponents = rootFolder.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    /// The API's path of an item (`a/b/c.jpg`), empty for the media root.
    func apiPath(_ id: ItemIdentifier) -> String {
        (rootComponents + id.components).joined(separator: "/")
    }

    /// `GET /media?path=DIR`: the listing of a folder (no `path` for the media root).
    func media(folder: ItemIdentifier) -> String {
        let path = apiPath(folder)
        return baseURL + "/media" + (path.isEmpty ? "" : "?path=" + Self.encode(path))
    }

    /// `DELETE /media?path=PATH`.
    func mediaItem(_ id: ItemIdentifier) -> String {
        baseURL + "/media?path=" + Self.encode(apiPath(id))
    }

    /// `POST /media`: the endpoint; the folder goes in the form body (`mediaForm`).
    var mediaEndpoint: String { baseURL + "/media" }

    /// The form body `path=DIR` of `POST /media`.
    func mediaForm(_ id: ItemIdentifier) -> Data {
        Data(("path=" + Self.encode(apiPath(id))).utf8)
    }

    /// `GET|POST /file?path=DIR&id=NAME` (no `path` for an item in the media root).
    func file(_ id: ItemIdentifier) -> String { item("/file", id) }

    /// `GET /preview?path=DIR&id=NAME`.
    func preview(_ id: ItemIdentifier) -> String { item("/preview", id) }

    private func item(_ endpoint: String, _ id: ItemIdentifier) -> String {
        let folder = apiPath(id.parent ?? .rootContainer)
        let name = "id=" + Self.encode(id.name)
        return baseURL + endpoint + "?" + (folder.isEmpty ? name : "path=" + Self.encode(folder) + "&" + name)
    }

    // MARK: encoding


    /// Percent-encodes a query value with the strict set: only unreserved bytes stay literal.
    /// `/` is encoded too; the server decodes it back and splits the path on it.
    static func encode(_ value: String) -> String {
        PercentEncoding.strict(value)
    }
}
