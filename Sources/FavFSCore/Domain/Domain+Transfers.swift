/// Transfer progress, for `favfs status` and the `user.favfs.state` attribute.
extension Domain {
    /// Bytes done and total of the upload (or else the download) of `id` running now; nil when
    /// none is.
    public func transferProgress(of id: ItemIdentifier) -> (done: Int64, total: Int64)? {
        content.transfers.progress(of: id)
    }

    /// Every upload and download running now, oldest first.
    public func transfers() -> [TransferRegistry.Snapshot] {
        content.transfers.snapshot()
    }
}
