import Foundation
import FavFSCore

extension ProviderFactory {
    /// `file:///path`: the folder must exist.
    static func makeLocal(_ configuration: RemoteConfiguration) throws -> any Provider {
        try configuration.requireKnownOptions(RemoteURL.Kind.local.optionNames)
        let url = configuration.url
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue else {
            throw ProviderError(.notFound, remote: url.description, detail: "no such folder")
        }
        return LocalProvider(root: url.path)
    }
}
