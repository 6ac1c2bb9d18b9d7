import FavFSCore

/// The poller's cheap check: a folder's `modify` fact (one MLST on the control connection),
/// which changes when a name in it is added, removed or renamed. Servers without MLST have no
/// cheap check: nil, and the poller lists.
extension FTPProvider: FolderStampProvider {
    public func folderStamp(of folder: ItemIdentifier) async throws -> String? {
        guard try await features().machineListings else { return nil }
        let path = folder.rawValue
        let lines = try await commands(["MLST \(paths.serverPath(folder))"], command: "MLST", path: path)
        guard let entry = FTPReply.mlstEntries(lines).last else { return nil }
        return entry.modifiedStamp
    }
}
