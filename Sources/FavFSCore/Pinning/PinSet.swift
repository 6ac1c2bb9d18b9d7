import Foundation

/// The pinned items in memory (the store keeps them across mounts): an item is pinned when it
/// or a folder above it is. Asked on every eviction pass and status query, so it is a set of
/// identifiers walked up by parent, with its own lock (never the domain's).
final class PinSet: Sendable {
    private let roots: Guarded<Set<ItemIdentifier>>

    init(_ roots: [ItemIdentifier]) { self.roots = Guarded("PinSet", Set(roots)) }

    var all: [ItemIdentifier] { roots.withLock { $0.sorted { $0.rawValue < $1.rawValue } } }

    /// The pinned item that covers `id` (itself or the nearest folder above), if any.
    func root(covering id: ItemIdentifier) -> ItemIdentifier? {
        roots.withLock { roots in
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
        roots.withLock { roots in
            roots = roots.filter { !$0.isBelow(id) }
            roots.insert(id)
        }
    }

    func remove(_ id: ItemIdentifier) {
        roots.withLock { roots in
            roots = roots.filter { !$0.isAtOrBelow(id) }
        }
    }

    func move(_ from: ItemIdentifier, to: ItemIdentifier) {
        roots.withLock { roots in
            for r in roots where r.isAtOrBelow(from) {
                roots.remove(r)
                roots.insert(ItemIdentifier(to.rawValue + r.rawValue.dropFirst(from.rawValue.count)))
            }
        }
    }
}
