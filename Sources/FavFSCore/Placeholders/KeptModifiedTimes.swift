/// Modification times set here on a remote that does not keep them (S3, nginx, WsgiDAV
/// without dead properties, FTP without MFMT: `cp -p`, `rsync -a`, `tar x`), with the remote
/// version each was set on: listings show them while that version stays, so `rsync -a` run
/// again finds its times and sends nothing. A value under `Domain.lock`; the placeholder store
/// keeps them across mounts (`PlaceholderStore.keptTimes`).
struct KeptModifiedTimes {
    private var times: [ItemIdentifier: (version: String, time: Timestamp)] = [:]
    /// Whether this mount said yet that the remote keeps no times (once is enough).
    private var told = false

    /// The times kept by earlier mounts of the cache dir.
    init(_ stored: [KeptTime] = []) {
        for k in stored { times[k.id] = (k.version, k.time) }
    }

    var isEmpty: Bool { times.isEmpty }

    /// Keeps `time` for `id` while the remote has `version` (the item's `contentTag`). True the
    /// first time in this mount
    /// (the caller tells the user why times are kept here only).
    mutating func keep(_ id: ItemIdentifier, version: String, time: Timestamp) -> Bool {
        times[id] = (version, time)
        defer { told = true }
        return !told
    }

    /// `item` with the time kept for it, if its version is still the one the time was set on
    /// (else the time is forgotten: the content changed). Versions compare as content tags:
    /// an HTTP server's weak tag turning strong is the same content.
    mutating func apply(_ item: Item) -> Item {
        guard let kept = times[item.identifier] else { return item }
        guard kept.version == item.contentTag else {
            times[item.identifier] = nil
            return item
        }
        var item = item
        item.modifiedTime = kept.time
        return item
    }

    /// `source` and what is below it were renamed to `destination` (rsync's temporary file
    /// becoming the file): the times go with them; what `destination` had is gone.
    mutating func renamed(_ source: ItemIdentifier, to destination: ItemIdentifier) {
        times = times.filter { !$0.key.isAtOrBelow(destination) }
        for (id, kept) in times where id.isAtOrBelow(source) {
            times[id] = nil
            times[ItemIdentifier(destination.rawValue + id.rawValue.dropFirst(source.rawValue.count))] = kept
        }
    }
}
