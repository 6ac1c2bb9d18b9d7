import Foundation

/// Remotes that keep no modification times (Favart) would show 1970 for everything, and a
/// freedesktop thumbnail whose `Thumb::MTime` is 0 counts as outdated for tumbler, which then
/// downloads every image to make its own. An item the remote gives no time shows the time this
/// cache dir first saw that version of it instead: kept with the placeholder, the same across
/// listings and mounts, new when the content changes.
extension Domain {
    static func withFirstSeenTime(_ item: Item, before: Item?, now: Double) -> Item {
        guard item.modifiedTime == nil else { return item }
        var item = item
        if let before, before.kind == item.kind, before.version == item.version, before.size == item.size || item.kind == .folder,
           let seen = before.modifiedTime {
            item.modifiedTime = seen
        } else {
            item.modifiedTime = Timestamp(seconds: Int64(now))
        }
        return item
    }

    /// `withFirstSeenTime` against the placeholder this mount has (lock held).
    func withFirstSeenTimeLocked(_ s: inout DomainState, _ item: Item) -> Item {
        guard item.modifiedTime == nil else { return item }
        return Self.withFirstSeenTime(item, before: cachedItemLocked(&s, item.identifier), now: Self.now)
    }
}
