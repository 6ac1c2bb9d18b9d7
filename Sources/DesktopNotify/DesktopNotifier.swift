import Foundation
import Logging

/// What keeps notifications from flooding the desktop: the same event (same `key`: kind and
/// file) at most once per `perKeyInterval`; at most `burstLimit` within `burstWindow`, the
/// events beyond held and told as one summary when the window has passed. Pure: the caller
/// gives the time.
public struct NotificationLimiter: Sendable {
    public enum Decision: Equatable, Sendable {
        case send
        /// The same event was notified less than `perKeyInterval` ago.
        case duplicate
        /// Too many at once: counted for the summary, to be sent at `summaryAt`.
        case held(summaryAt: Double)
    }

    public let perKeyInterval: Double
    public let burstLimit: Int
    public let burstWindow: Double
    private var lastByKey: [String: Double] = [:]
    private var recent: [Double] = []
    public private(set) var held = 0

    public init(perKeyInterval: Double = 60, burstLimit: Int = 5, burstWindow: Double = 10) {
        self.perKeyInterval = perKeyInterval; self.burstLimit = burstLimit; self.burstWindow = burstWindow
    }

    public mutating func admit(key: String, now: Double) -> Decision {
        if let last = lastByKey[key], now - last < perKeyInterval { return .duplicate }
        lastByKey = lastByKey.filter { now - $0.value < perKeyInterval }
        lastByKey[key] = now
        recent.removeAll { now - $0 >= burstWindow }
        if recent.count >= burstLimit || held > 0 {
            held += 1
            return .held(summaryAt: (recent.first ?? now) + burstWindow)
        }
        recent.append(now)
        return .send
    }

    /// The number of held events to summarise now (0: none), counted as one notification sent.
    public mutating func takeHeld(now: Double) -> Int {
        defer { held = 0 }
        if held > 0 { recent.removeAll { now - $0 >= burstWindow }; recent.append(now) }
        return held
    }
}

/// Sends freedesktop notifications (`org.freedesktop.Notifications.Notify` on the session bus)
/// for one mount, rate-limited by `NotificationLimiter`. `notify` only queues: the D-Bus work
/// runs on a serial queue of its own, each call bounded by a timeout. Without a session bus or
/// a notification server it is silent: one debug line, the first time. A connection that died
/// is made again at the next notification.
public final class DesktopNotifier: @unchecked Sendable {
    public struct Note: Sendable, Equatable {
        public var key: String
        public var summary: String
        public var body: String
        /// A freedesktop category (`transfer.error`, `network.disconnected`, …), or nil.
        public var category: String?
        public init(key: String, summary: String, body: String, category: String? = nil) {
            self.key = key; self.summary = summary; self.body = body; self.category = category
        }
    }

    private let queue = DispatchQueue(label: "favfs.notifications")
    private let mountpoint: String
    private let environment: [String: String]
    private let timeout: Double
    private let log: Logger
    private let clock: @Sendable () -> Double
    // Queue-confined state.
    private var limiter: NotificationLimiter
    private var connection: DBusConnection?
    private var summaryScheduled = false
    private var toldUnavailable = false
    private let stopLock = NSLock()
    private var stopRequested = false

    public init(mountpoint: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                limiter: NotificationLimiter = NotificationLimiter(), timeout: Double = 5,
                log: Logger = Logger(label: "favfs.notifications"),
                clock: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }) {
        self.mountpoint = mountpoint; self.environment = environment; self.limiter = limiter
        self.timeout = timeout; self.log = log; self.clock = clock
    }

    /// Queues `note` (never blocks).
    public func notify(_ note: Note) {
        queue.async { [self] in
            guard !stopped else { return }
            switch limiter.admit(key: note.key, now: clock()) {
            case .send:
                send(note)
            case .duplicate:
                log.debug("notification not repeated within \(Int(limiter.perKeyInterval)) s: \(note.summary)")
            case .held(let at):
                guard !summaryScheduled else { return }
                summaryScheduled = true
                queue.asyncAfter(deadline: .now() + max(0, at - clock())) { [self] in sendSummary() }
            }
        }
    }

    /// Waits for the queued notifications to be sent (or given up).
    public func drain() { queue.sync {} }

    /// Sends what is queued for up to `seconds`, then nothing more; closes the connection.
    /// Never waits longer (a bus that hangs must not hold up an unmount).
    public func stop(within seconds: Double = 2) {
        let drained = DispatchSemaphore(value: 0)
        queue.async { drained.signal() }
        _ = drained.wait(timeout: .now() + seconds)
        stopLock.withLock { stopRequested = true }
        queue.async { [self] in
            connection?.close()
            connection = nil
        }
    }

    private var stopped: Bool { stopLock.withLock { stopRequested } }

    private func sendSummary() {
        summaryScheduled = false
        guard !stopped else { return }
        let n = limiter.takeHeld(now: clock())
        guard n > 0 else { return }
        send(Note(key: "summary", summary: "favfs: \(n) more event\(n == 1 ? "" : "s") in \(mountpoint)",
                  body: Self.escape("See `favfs status \(mountpoint)` and the log for what happened.")))
    }

    /// The hints and arguments of `Notify` (`susssasa{sv}i`), exposed for tests.
    public static func notifyArguments(_ note: Note) -> [DBusValue] {
        var hints: [String: DBusValue] = ["urgency": .byte(1)]
        if let c = note.category { hints["category"] = .string(c) }
        return [.string("favfs"), .uint32(0), .string("drive-harddisk"), .string(note.summary), .string(note.body),
                .strings([]), .vardict(hints), .int32(-1)]
    }

    /// Bodies may hold markup (servers with `body-markup`): a file name is text.
    public static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    private func send(_ note: Note) {
        // A connection kept from an earlier note may have died (the bus restarted, the session
        // ended and began again): then once more on a new one.
        let attempts = connection?.isOpen == true ? 2 : 1
        for attempt in 0..<attempts {
            do {
                if connection?.isOpen != true {
                    connection = nil
                    guard let address = DBusConnection.sessionBusAddress(environment: environment) else {
                        unavailable("no session bus (DBUS_SESSION_BUS_ADDRESS is not set, and no $XDG_RUNTIME_DIR/bus)")
                        return
                    }
                    connection = try DBusConnection(address: address, timeout: timeout)
                }
                _ = try connection!.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                         interface: "org.freedesktop.Notifications", member: "Notify",
                                         body: Self.notifyArguments(note))
                toldUnavailable = false
                return
            } catch let e as DBusCallError {
                unavailable("the session bus has no notification server (\(e.name))")
                return
            } catch {
                connection?.close()
                connection = nil
                if attempt == attempts - 1 { unavailable("session bus: \(error)") }
            }
        }
    }

    private func unavailable(_ why: String) {
        guard !toldUnavailable else { return }
        toldUnavailable = true
        log.debug("no desktop notifications: \(why)")
    }
}
