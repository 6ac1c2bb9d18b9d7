import Foundation

/// Where one kind of event goes: one subscriber, called on the publisher's thread. Publishers
/// never publish while holding a lock of theirs; the subscriber must not block (it queues).
/// The kernel notifier, the freedesktop thumbnail writer and the desktop notifier subscribe
/// to the domain's feeds.
public final class Feed<Event: Sendable>: Sendable {
    private let subscriber = Guarded<(@Sendable (Event) -> Void)?>("Feed", nil)

    public init() {}

    /// Sets the one subscriber (nil: events are dropped).
    public func subscribe(_ handler: (@Sendable (Event) -> Void)?) {
        subscriber.withLock { $0 = handler }
    }

    public func publish(_ event: Event) {
        subscriber.withLock { $0 }?(event)
    }
}

/// A folder listed for a program (a readdir) with its children: what a file manager shows.
public struct FolderShown: Sendable {
    public let folder: ItemIdentifier
    public let items: [Item]
}
