import Foundation

/// Told each time a folder's children are listed for a program (a readdir): what a file manager
/// is showing. The freedesktop thumbnail writer subscribes.
public final class FolderShownFeed: @unchecked Sendable {
    private let lock = NSLock()
    private var subscriber: (@Sendable (ItemIdentifier, [Item]) -> Void)?

    public init() {}

    public func subscribe(_ handler: (@Sendable (ItemIdentifier, [Item]) -> Void)?) {
        lock.withLock { subscriber = handler }
    }

    func publish(_ folder: ItemIdentifier, _ items: [Item]) {
        lock.withLock { subscriber }?(folder, items)
    }
}
