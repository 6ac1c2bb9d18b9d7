import GRDB

/// The rows of an item and of everything below it, as SQL. Ids compare with SQLite's BINARY
/// collation, byte by byte in UTF-8, so every id below `/a` lies in [`/a/`, `/a0`) (`0` is the
/// byte after `/`): a search of the id index. Not `substr` or `LIKE`: both scan the whole table
/// at every rename and delete; `substr` counts characters where a byte length was given (a
/// folder named `Café` lost track of what it held); `LIKE` reads `%` and `_` in names as patterns.
struct Subtree {
    let id: ItemIdentifier

    /// The identifiers below `id` start with this.
    var prefix: String { id.descendantPrefix }
    /// The least string after every one that starts with `prefix`.
    private var end: String { String(prefix.dropLast()) + "0" }

    /// `column` is `id` or below it.
    func includes(_ column: String) -> String { "(\(column) = ? OR (\(column) >= ? AND \(column) < ?))" }
    var includesArguments: StatementArguments { [id.rawValue, prefix, end] }

    /// `column` is below `id`, not `id` itself.
    func below(_ column: String) -> String { "(\(column) >= ? AND \(column) < ?)" }
    var belowArguments: StatementArguments { [prefix, end] }

    /// `column` (at or below `id`) moved to the same place under `destination`. SQLite's
    /// `substr` counts characters (Unicode code points) of text, so the length cut off is one.
    func moved(_ column: String) -> String { "? || substr(\(column), ? + 1)" }
    func movedArguments(to destination: ItemIdentifier) -> StatementArguments {
        [destination.rawValue, id.rawValue.unicodeScalars.count]
    }
}
