/// A folder's placeholders held in memory: children by name, in listing order, and when the
/// folder was last enumerated (nil: never, so a listing must be fetched before serving it).
struct FolderState: Sendable {
    var children: [String: Item]
    var order: [String]
    var listedAt: Double?
    var lastFailure: Double?

    init(items: [Item], listedAt: Double?) {
        children = Dictionary(items.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        order = items.map(\.name).sorted()
        self.listedAt = listedAt
    }

    var items: [Item] { order.compactMap { children[$0] } }
}
