import Foundation
import FavFSCore
import DesktopNotify

/// Desktop notifications of what the user must know about a mount, even with no terminal
/// open: a conflict copy, an upload the server refused for good, the remote gone and back.
/// The core publishes them (`Domain.userEvents`); they are worded here and sent over the
/// session bus by `DesktopNotifier` (queued, rate-limited, silent without a bus or server).
final class DesktopNotifications: @unchecked Sendable {
    private let domain: Domain
    private let mountpoint: String
    private let remote: String
    let notifier: DesktopNotifier

    /// `remote`: the remote as the user names it (its name, else its URL without secrets).
    init(domain: Domain, mountpoint: String, remote: String,
         environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.domain = domain; self.mountpoint = mountpoint; self.remote = remote
        notifier = DesktopNotifier(mountpoint: mountpoint, environment: environment)
    }

    func start() {
        domain.userEvents.subscribe { [weak self] event in
            guard let self else { return }
            notifier.notify(Self.note(for: event, mountpoint: mountpoint, remote: remote))
        }
    }

    /// Stops at unmount: nothing more is sent.
    func stop() {
        domain.userEvents.subscribe(nil)
        notifier.stop()
    }

    /// The path of `id` in the mount.
    static func path(_ id: ItemIdentifier, mountpoint: String) -> String {
        (mountpoint == "/" ? "" : mountpoint) + id.rawValue
    }

    static func note(for event: UserEvent, mountpoint: String, remote: String) -> DesktopNotifier.Note {
        let e = DesktopNotifier.escape
        switch event {
        case .conflictCopy(let original, let copy):
            let file = path(original, mountpoint: mountpoint)
            return .init(key: "conflict " + original.rawValue, summary: "favfs: conflict in \(original.name)",
                         body: e("\(file) was changed on \(remote) while it was edited here. The server's version keeps the name; the edit made here was saved beside it as \(copy.name) (\(mountpoint))."),
                         category: "transfer.error")
        case .uploadRefused(let id, let reason, let keptAt):
            let file = path(id, mountpoint: mountpoint)
            let copy = keptAt.map { "A copy is in \($0)." } ?? "It could not be copied to lost+found."
            return .init(key: "refused " + id.rawValue, summary: "favfs: upload refused: \(id.name)",
                         body: e("\(remote) refused \(file) for good: \(reason). The file stays in \(mountpoint) as written until it is changed or removed. \(copy)"),
                         category: "transfer.error")
        case .remoteOffline(let why):
            return .init(key: "offline", summary: "favfs: \(remote) is offline",
                         body: e("\(mountpoint): \(why). Files cached here can still be read and changed; the changes are uploaded once it answers."),
                         category: "network.disconnected")
        case .remoteOnline:
            return .init(key: "online", summary: "favfs: \(remote) is back online",
                         body: e("\(mountpoint): pending changes are being uploaded."),
                         category: "network.connected")
        }
    }
}
