import FavFSCore
import Logging

/// A Depth 1 multistatus → one enumeration page: the folder's own entry checked, children named
/// from their hrefs, unservable names skipped (and logged), foreign hrefs ignored.
enum WebDAVListing {
    static func page(from resources: [DAVResource], folder: ItemIdentifier, paths: WebDAVPaths,
                     errors: WebDAVErrors, log: Logger = Logger(label: "favfs.webdav")) throws -> EnumerationPage {
        var builder = Builder(folder: folder, paths: paths, errors: errors, log: log)
        for resource in resources { builder.add(resource) }
        return try builder.page()
    }

    /// Builds a page one response at a time, as the parser reads them.
    struct Builder {
        let folder: ItemIdentifier
        let paths: WebDAVPaths
        let errors: WebDAVErrors
        let log: Logger
        private var items: [Item] = []
        private var skipped: [(name: String, problem: ItemNameProblem)] = []
        private var notAFolder = false
        private let folderSegments: [String]

        init(folder: ItemIdentifier, paths: WebDAVPaths, errors: WebDAVErrors, log: Logger) {
            self.folder = folder; self.paths = paths; self.errors = errors; self.log = log
            folderSegments = paths.segments(of: folder)
        }

        mutating func add(_ resource: DAVResource) {
            switch paths.relation(ofHref: resource.href, toFolder: folderSegments) {
            case .itself:
                if !resource.isCollection { notAFolder = true }
            case .child(let name):
                if let problem = ItemIdentifier.validate(name: name) {
                    log.warning("skipping an entry the server listed", metadata: [
                        "remote": "\(errors.remote)", "folder": "\(folder.rawValue)",
                        "name": "\(name.debugDescription)", "problem": "\(problem.rawValue)",
                    ])
                    skipped.append((name, problem))
                    return
                }
                items.append(WebDAVListing.item(from: resource, identifier: folder.child(name)))
            case .unrelated:
                log.debug("ignoring an href outside the listed folder", metadata: [
                    "remote": "\(errors.remote)", "folder": "\(folder.rawValue)", "href": "\(resource.href)",
                ])
            }
        }

        func page() throws -> EnumerationPage {
            if notAFolder {
                throw ProviderError(.notAFolder, remote: errors.remote, path: folder.rawValue, status: 207,
                                    detail: "PROPFIND: listed as a file, not a folder")
            }
            return EnumerationPage(items: items, nextPage: nil, skipped: skipped)
        }
    }

    /// A file without `getetag` gets a version from its size and mtime (`WebDAVETag.synthetic`),
    /// so a change by another client is still noticed before an upload replaces it.
    static func item(from resource: DAVResource, identifier: ItemIdentifier) -> Item {
        let size = resource.isCollection ? 0 : max(0, resource.contentLength ?? 0)
        let modified = resource.lastModified.flatMap(HTTPDate.parse)
        let version = resource.etag ?? (resource.isCollection ? nil : WebDAVETag.synthetic(size: size, modified: modified))
        var item = Item(identifier: identifier, kind: resource.isCollection ? .folder : .file, size: size,
                        modified: modified, version: version)
        // A time set through a mount holds while the content is the version it was set on
        // (compared weakly: Apache's tag of a file changed within the second is weak, and
        // turns strong a second later).
        if let kept = resource.keptModified.flatMap(WebDAVModifiedTime.init(property:)),
           WebDAVETag.weaklyEqual(kept.version, version ?? "") {
            item.modifiedTime = kept.time
        }
        return item
    }
}
