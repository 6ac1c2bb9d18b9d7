import Foundation

/// The pinned items in memory (the store keeps them across mounts): an item is pinned when it
/// or a folder above it is. Asked on every eviction pass and status query, so it is a set of
/// identifiers walked up by parent, with its own lock (never the domain's).
final class PinSet: @unchecked Sendable {
    private let lock = NSLock()
    private var roots: Set<ItemIdentifier>

    init(_ roots: [ItemIdentifier]) { self.roots = Set(roots) }

    var all: [ItemIdentifier] { lock.withLock { roots.sorted { $0.rawValue < $1.rawValue } } }

    /// The pinned item that covers `id` (itself or the nearest folder above), if any.
    func root(covering id: ItemIdentifier) -> ItemIdentifier? {
        lock.withLock {
            guard !roots.isEmpty else { return nil }
            var at: ItemIdentifier? = id
            while let current = at {
                if roots.contains(current) { return current }
                at = current.parent
            }
            return nil
        }
    }

    func covers(_ id: ItemIdentifier) -> Bool { root(covering: id) != nil }

    func add(_ id: ItemIdentifier) {
        lock.withLock {
            roots = roots.filter { !$0.isBelow(id) }
            roots.insert(id)
        }
    }

    func remove(_ id: ItemIdentifier) {
        lock.withLock {
            roots = roots.filter { !$0.isAtOrBelow(id) }
        }
    }

    func move(_ from: ItemIdentifier, to: ItemIdentifier) {
        lock.withLock {
            for r in roots where r.isAtOrBelow(from) {
                roots.remove(r)
                roots.insert(ItemIdentifier(to.rawValue + r.rawValue.dropFirst(from.rawValue.count)))
            }
        }
    }
}
