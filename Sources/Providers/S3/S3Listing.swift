import FavFSCore
import Logging

/// A ListObjectsV2 page (delimiter "/") → one enumeration page: CommonPrefixes are folders,
/// Contents are files; the folder's own "prefix/" marker is skipped, names that cannot be
/// POSIX names (empty from "a//b", ".", "..", too long) are skipped and logged.
enum S3Listing {
    static func page(from listed: S3ListPage, folder: ItemIdentifier, prefix: String, remote: String,
                     log: Logger = Logger(label: "favfs.s3")) -> EnumerationPage {
        var items: [Item] = []
        var skipped: [(name: String, problem: ItemNameProblem)] = []
        var folderNames = Set<String>()

        func accept(_ name: String) -> Bool {
            if let problem = ItemIdentifier.validate(name: name) {
                log.warning("skipping a key the server listed", metadata: [
                    "remote": "\(remote)", "folder": "\(folder.rawValue)", "name": "\(name.debugDescription)",
                    "problem": "\(problem.rawValue)",
                ])
                skipped.append((name, problem))
                return false
            }
            return true
        }

        for commonPrefix in listed.commonPrefixes {
            guard let name = S3Addressing.childName(of: commonPrefix, in: prefix), accept(name) else { continue }
            folderNames.insert(name)
            items.append(Item(identifier: folder.child(name), kind: .folder))
        }
        for object in listed.objects {
            // The folder's own marker ("prefix/") is listed as its first key.
            if object.key == prefix { continue }
            guard let name = S3Addressing.childName(of: object.key, in: prefix), accept(name) else { continue }
            if folderNames.contains(name) {
                // Both a key "x" and keys below "x/": one directory entry only, the folder.
                log.warning("a key has the name of a folder; listing the folder only", metadata: [
                    "remote": "\(remote)", "folder": "\(folder.rawValue)", "name": "\(name.debugDescription)",
                ])
                continue
            }
            items.append(Item(identifier: folder.child(name), kind: .file, size: max(0, object.size),
                              modified: object.lastModified, version: object.etag))
        }
        return EnumerationPage(items: items, nextPage: nil, skipped: skipped)
    }
}
