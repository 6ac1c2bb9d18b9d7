/// A provider whose folders carry a cheap stamp that changes when a child is added, removed or
/// renamed — a folder's modification time on SFTP and FTP (MLST). The poller asks for it
/// first and lists the folder only when it changed (and every few rounds regardless, since a
/// file rewritten in place leaves its folder's time alone).
public protocol FolderStampProvider: Provider {
    /// The folder's stamp, or nil when this server cannot tell (the poller then lists).
    func folderStamp(of folder: ItemIdentifier) async throws -> String?
}
